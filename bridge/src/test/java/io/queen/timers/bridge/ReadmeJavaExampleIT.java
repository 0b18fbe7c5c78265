package io.queen.timers.bridge;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.queen.timers.client.audit.AuditEvent;
import io.queen.timers.routes.RouteSettings;
import io.queen.timers.stack.Stack;
import io.queen.timers.testkit.PerClass;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** README "Use it from Java": the snippet is UseItFromJava.java (but its package line), and it runs against a real bridge. */
class ReadmeJavaExampleIT {

    @RegisterExtension
    static final PerClass<Stack> stack = PerClass.of(Stack::shared);

    @Test
    void theReadmeSnippetIsTheExampleClass() throws Exception {
        String readme = Files.readString(Path.of("../README.md"), StandardCharsets.UTF_8);
        Matcher m = Pattern.compile("## Use it from Java\\n.*?```java\\n(.*?)```", Pattern.DOTALL).matcher(readme);
        assertThat(m.find()).as("README has a ```java block under \"## Use it from Java\"").isTrue();
        String example = Files.readString(Path.of("src/test/java/io/queen/timers/bridge/UseItFromJava.java"), StandardCharsets.UTF_8);
        String withoutPackage = example.substring(example.indexOf('\n', example.indexOf("package ")) + 1).stripLeading();
        assertThat(m.group(1)).isEqualTo(withoutPackage);
    }

    @Test
    void theExampleSchedulesAndHearsItsVerdict() {
        String commands = stack.get().commandTopic();
        String audit = stack.get().auditTopic();
        Instant before = Instant.now();
        try (BridgeMain bridge = Bridges.start(stack.get(), s -> s.set(RouteSettings.COMMAND_TOPICS, List.of(commands))
                .set(BridgeSettings.GROUP_ID, stack.get().uniqueName("g-readme-")), new SimpleMeterRegistry())) {
            AuditEvent.Verdict verdict = UseItFromJava.remindLater(stack.get().bootstrapServers(), commands, audit);
            assertThat(verdict).isInstanceOf(AuditEvent.Scheduled.class);
            AuditEvent.Scheduled s = (AuditEvent.Scheduled) verdict;
            assertThat(s.queue()).isEqualTo("orders.reminders");
            assertThat(s.txn()).isEqualTo("remind-order-42");
            assertThat(s.source().topic()).isEqualTo(commands);
            assertThat(s.deliverAt()).isBetween(before.plus(Duration.ofMinutes(30)).minusSeconds(5), Instant.now().plus(Duration.ofMinutes(30)));
            // sent again, the same command is the same timer: rescheduled, same message
            AuditEvent.Verdict again = UseItFromJava.remindLater(stack.get().bootstrapServers(), commands, audit);
            assertThat(again).isInstanceOfSatisfying(AuditEvent.Rescheduled.class, r -> assertThat(r.messageId()).isEqualTo(s.messageId()));
        }
    }
}
