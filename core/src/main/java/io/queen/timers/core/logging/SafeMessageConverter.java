package io.queen.timers.core.logging;

import ch.qos.logback.classic.pattern.ClassicConverter;
import ch.qos.logback.classic.spi.ILoggingEvent;
import io.queen.timers.core.text.Printable;
import io.queen.timers.core.text.Secrets;

/**
 * {@code %safeMsg} in a logback pattern: the message on one line, control characters escaped and
 * secrets masked. Log messages carry producers' text (timer keys, txns, queue and partition names,
 * database errors quoting them); a CR or LF in one must not forge a log line, nor an ESC reach a
 * terminal. The safety net under every call site, whatever it forgot.
 */
public final class SafeMessageConverter extends ClassicConverter {

    @Override
    public String convert(ILoggingEvent event) {
        return Printable.line(Secrets.mask(event.getFormattedMessage()));
    }
}
