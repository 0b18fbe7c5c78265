package io.queen.timers.core.logging;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.OutputStreamAppender;
import ch.qos.logback.core.encoder.Encoder;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.Map;
import org.slf4j.LoggerFactory;

/**
 * Applies {@code log.format} (CommonSettings, env {@code QUEEN_LOG_FORMAT}) to the running logback: {@code text}
 * leaves the pattern of logback.xml, {@code json} gives every console/file appender of the root logger a
 * {@link JsonLogEncoder}. Done in code at a service's start rather than in logback.xml, because the setting has
 * one owner (a --config file may set it, not only the environment) and a logback {@code <if>} would need janino.
 * PRICE: the lines logged before the settings are read (none but a bad-setting error, which goes to stderr as one
 * plain line) stay in the text format.
 */
public final class LogFormat {

    public static final String TEXT = "text";
    public static final String JSON = "json";

    private LogFormat() {}

    /** The encoders logback.xml gave the appenders this class switched to JSON: what {@code text} puts back. */
    private static final Map<OutputStreamAppender<ILoggingEvent>, Encoder<ILoggingEvent>> TEXT_ENCODERS = new IdentityHashMap<>();

    /**
     * Switches the root logger's output appenders to {@code format} (idempotent: a second service in the same JVM
     * changes nothing; {@code text} after {@code json} puts logback.xml's encoders back). Called at a service's
     * start, before its threads log.
     */
    public static synchronized void apply(String format) {
        if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext context)) {
            return;   // another SLF4J binding: its own configuration decides
        }
        if (!JSON.equals(format)) {
            TEXT_ENCODERS.forEach((out, text) -> {
                Encoder<ILoggingEvent> json = out.getEncoder();
                out.setEncoder(text);
                json.stop();
            });
            TEXT_ENCODERS.clear();
            return;
        }
        Logger root = context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        for (Iterator<Appender<ILoggingEvent>> it = root.iteratorForAppenders(); it.hasNext(); ) {
            if (it.next() instanceof OutputStreamAppender<ILoggingEvent> out && !(out.getEncoder() instanceof JsonLogEncoder)) {
                JsonLogEncoder json = new JsonLogEncoder();
                json.setContext(context);
                json.start();
                TEXT_ENCODERS.put(out, out.getEncoder());
                out.setEncoder(json);
            }
        }
    }
}
