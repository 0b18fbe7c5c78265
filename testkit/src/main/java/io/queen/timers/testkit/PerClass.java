package io.queen.timers.testkit;

import java.util.function.Function;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * JUnit 5 extension: one {@code T} per test class, made before its first test from the class's name and closed after its
 * last, for a resource the testkit does not know the type of (a test stack):
 *
 * <pre>{@code
 * @RegisterExtension
 * static final PerClass<Stack> stack = PerClass.of(Stack::shared);
 * }</pre>
 */
public final class PerClass<T extends AutoCloseable> implements BeforeAllCallback, AfterAllCallback {

    private final Function<String, T> make;
    private T value;

    private PerClass(Function<String, T> make) {
        this.make = make;
    }

    /** {@code make} is given the test class's simple name (to name what it makes after). */
    public static <T extends AutoCloseable> PerClass<T> of(Function<String, T> make) {
        return new PerClass<>(make);
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        value = make.apply(context.getRequiredTestClass().getSimpleName());
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        if (value != null) {
            value.close();
            value = null;
        }
    }

    /** The class's {@code T}; only between its first and last test. */
    public T get() {
        if (value == null) {
            throw new IllegalStateException("PerClass is made before a class's first test: register it on a static field");
        }
        return value;
    }
}
