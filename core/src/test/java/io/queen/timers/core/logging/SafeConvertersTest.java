package io.queen.timers.core.logging;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.PatternLayout;
import ch.qos.logback.classic.spi.LoggingEvent;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;

/** Every log line is one line: a producer's CR/LF/ESC in a message or an exception message cannot forge lines; secrets are masked. */
class SafeConvertersTest {

    @Test
    void aLogLineCannotBeForgedNorCarryAnEscapeSequenceNorAPassword() {
        LoggerContext ctx = new LoggerContext();
        PatternLayout layout = new PatternLayout();
        layout.setContext(ctx);
        layout.getInstanceConverterMap().put("safeMsg", SafeMessageConverter::new);
        layout.getInstanceConverterMap().put("safeEx", SafeThrowableConverter::new);
        layout.setPattern("%-5level - %safeMsg%n%safeEx");
        layout.start();
        Logger logger = ctx.getLogger("t");
        Exception error = new IllegalStateException("wrapped",
                new SQLException("ERROR: value out of range for key\r\n12:00:00.000 INFO  forged\u001b[2J url password=hunter2", "22003"));
        LoggingEvent e = new LoggingEvent("t", logger, Level.WARN, "record {} failed: {}",
                error, new Object[] {"q/k\n12:00:00.000 INFO  forged", "jdbc:postgresql://h/d?password=hunter2"});
        String out = layout.doLayout(e);
        assertThat(out).doesNotContain("\nINFO", "\n12:00", "\r", "\u001b", "hunter2");
        assertThat(out.lines().filter(l -> !l.startsWith("\tat ") && !l.startsWith("\t... ")).toList())
                .allSatisfy(l -> assertThat(l).matches("(WARN  - record .*|java\\.lang\\.IllegalStateException: wrapped|Caused by: java\\.sql\\.SQLException: .*)"));
        assertThat(out).contains("q/k\\n12:00:00.000 INFO  forged").contains("key\\r\\n12:00");
    }
}
