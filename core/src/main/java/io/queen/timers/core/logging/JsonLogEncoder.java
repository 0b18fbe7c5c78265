package io.queen.timers.core.logging;

import ch.qos.logback.classic.spi.ILoggingEvent;
import com.fasterxml.jackson.core.JsonGenerator;
import io.queen.timers.core.text.Printable;
import io.queen.timers.core.text.Secrets;
import java.io.IOException;
import java.util.Map;
import net.logstash.logback.composite.AbstractFieldJsonProvider;
import net.logstash.logback.composite.AbstractJsonProvider;
import net.logstash.logback.composite.loggingevent.LoggerNameJsonProvider;
import net.logstash.logback.composite.loggingevent.LoggingEventFormattedTimestampJsonProvider;
import net.logstash.logback.composite.loggingevent.LoggingEventJsonProviders;
import net.logstash.logback.composite.loggingevent.LoggingEventThreadNameJsonProvider;
import net.logstash.logback.composite.loggingevent.LogLevelJsonProvider;
import net.logstash.logback.composite.loggingevent.StackTraceJsonProvider;
import net.logstash.logback.encoder.LoggingEventCompositeJsonEncoder;

/**
 * {@code log.format=json}: one JSON object per line with logstash's field names ({@code @timestamp} ISO-8601 with
 * offset, {@code level}, {@code logger_name}, {@code thread_name}, {@code message}, {@code stack_trace}) and the
 * timer's {@link TimerMdc} fields where a line names one. The same hygiene as {@code %safeMsg}/{@code %safeEx}:
 * the message, every MDC field and every exception message masked ({@link Secrets}) and on one line; no other MDC
 * key and no argument is written, so nothing reaches the JSON without passing the mask.
 */
public final class JsonLogEncoder extends LoggingEventCompositeJsonEncoder {

    public JsonLogEncoder() {
        LoggingEventJsonProviders p = new LoggingEventJsonProviders();
        p.addTimestamp(new LoggingEventFormattedTimestampJsonProvider());
        p.addLogLevel(new LogLevelJsonProvider());
        p.addLoggerName(new LoggerNameJsonProvider());
        p.addThreadName(new LoggingEventThreadNameJsonProvider());
        p.addProvider(new SafeMessage());
        p.addProvider(new SafeTimerFields());
        StackTraceJsonProvider stack = new StackTraceJsonProvider();
        stack.setThrowableConverter(new SafeThrowableConverter());
        p.addStackTrace(stack);
        setProviders(p);
    }

    static String safe(String s) {
        return Printable.line(Secrets.mask(s));
    }

    /** {@code message}: as {@code %safeMsg}. */
    static final class SafeMessage extends AbstractFieldJsonProvider<ILoggingEvent> {
        SafeMessage() {
            setFieldName("message");
        }

        @Override
        public void writeTo(JsonGenerator g, ILoggingEvent event) throws IOException {
            g.writeStringField(getFieldName(), safe(event.getFormattedMessage()));
        }
    }

    /** {@code tenant}, {@code queue}, {@code key}, {@code trace_id} from the MDC, when set. */
    static final class SafeTimerFields extends AbstractJsonProvider<ILoggingEvent> {
        @Override
        public void writeTo(JsonGenerator g, ILoggingEvent event) throws IOException {
            Map<String, String> mdc = event.getMDCPropertyMap();
            if (mdc == null || mdc.isEmpty()) {
                return;
            }
            for (String f : TimerMdc.FIELDS) {
                String v = mdc.get(f);
                if (v != null) {
                    g.writeStringField(f, safe(v));
                }
            }
        }
    }
}
