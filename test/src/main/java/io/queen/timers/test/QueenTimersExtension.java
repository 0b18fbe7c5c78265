package io.queen.timers.test;

import io.queen.timers.client.verdict.CommandSender;
import io.queen.timers.log.read.LogMessage;
import java.util.List;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * JUnit 5: one {@link QueenTimersStack} per test class, started before its first test and stopped after its last.
 *
 * <pre>{@code
 * class ReminderIT {
 *     @RegisterExtension
 *     static final QueenTimersExtension queen = QueenTimersExtension.embedded();
 *
 *     @Test
 *     void remindsInThreeDays() {
 *         queen.sender().sendAndAwait(TimerCommand.schedule("reminders", "order-42").delay(Duration.ofDays(3))
 *                 .txn("remind-42").payload("{}").envelope(queen.commandTopic()), Duration.ofSeconds(10));
 *         queen.fireDue("reminders");
 *         ...
 *     }
 * }
 * }</pre>
 *
 * Registered on a {@code static} field (as above), or with {@code @ExtendWith(QueenTimersExtension.class)} for
 * the embedded stack, a test method or constructor then taking a {@link QueenTimersStack} parameter. See
 * docs/testing-with-queen-timers.md.
 */
public final class QueenTimersExtension implements BeforeAllCallback, AfterAllCallback, ParameterResolver {

    private final QueenTimersStack.Options options;
    private QueenTimersStack stack;

    /** The embedded stack (what {@code @ExtendWith(QueenTimersExtension.class)} runs). */
    public QueenTimersExtension() {
        this(QueenTimersStack.Options.embedded());
    }

    private QueenTimersExtension(QueenTimersStack.Options options) {
        this.options = options;
    }

    /** An embedded Kafka broker and an embedded PostgreSQL, both temporary. */
    public static QueenTimersExtension embedded() {
        return new QueenTimersExtension(QueenTimersStack.Options.embedded());
    }

    /** The broker and the database a test environment runs ({@link QueenTimersStack.Options#external}). */
    public static QueenTimersExtension external(String bootstrapServers, String jdbcUrl, String jdbcUser, String jdbcPassword) {
        return new QueenTimersExtension(QueenTimersStack.Options.external(bootstrapServers, jdbcUrl, jdbcUser, jdbcPassword));
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        if (stack == null) {
            stack = QueenTimersStack.start(options);
        }
    }

    @Override
    public void afterAll(ExtensionContext context) {
        stop();
    }

    private synchronized void stop() {
        if (stack != null) {
            stack.close();
            stack = null;
        }
    }

    /** The running stack; an {@link IllegalStateException} outside a test class's lifetime or on a non-static field. */
    public QueenTimersStack stack() {
        if (stack == null) {
            throw new IllegalStateException("no queen-timers stack is running: register QueenTimersExtension on a static field"
                    + " (@RegisterExtension static final QueenTimersExtension queen = QueenTimersExtension.embedded();)");
        }
        return stack;
    }

    /** {@link QueenTimersStack#commandTopic()}. */
    public String commandTopic() {
        return stack().commandTopic();
    }

    /** {@link QueenTimersStack#sender()}. */
    public CommandSender sender() {
        return stack().sender();
    }

    /** {@link QueenTimersStack#audit()}. */
    public AuditLog audit() {
        return stack().audit();
    }

    /** {@link QueenTimersStack#log(String)}. */
    public List<LogMessage> log(String queue) {
        return stack().log(queue);
    }

    /** {@link Clock#fireDue(String)}. */
    public List<Clock.Moved> fireDue(String queue) {
        return stack().clock().fireDue(queue);
    }

    /** {@link QueenTimersStack#clock()}. */
    public Clock clock() {
        return stack().clock();
    }

    @Override
    public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        return parameterContext.getParameter().getType() == QueenTimersStack.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        return stack();
    }
}
