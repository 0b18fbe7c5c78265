package io.queen.timers.core.logging;

import ch.qos.logback.classic.pattern.ThrowableProxyConverter;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.StackTraceElementProxy;
import io.queen.timers.core.text.Printable;
import io.queen.timers.core.text.Secrets;

/**
 * {@code %safeEx} in a logback pattern: the stack trace as logback prints it, but every exception
 * message (of the cause chain and the suppressed ones) on one line, escaped and masked, so that a
 * message quoting a producer's text cannot add lines of its own.
 */
public final class SafeThrowableConverter extends ThrowableProxyConverter {

    @Override
    protected String throwableProxyToString(IThrowableProxy tp) {
        return super.throwableProxyToString(safe(tp));
    }

    private static IThrowableProxy safe(IThrowableProxy tp) {
        return tp == null ? null : new Escaped(tp);
    }

    private record Escaped(IThrowableProxy tp) implements IThrowableProxy {
        @Override
        public String getMessage() {
            return tp.getMessage() == null ? null : Printable.line(Secrets.mask(tp.getMessage()));
        }

        @Override
        public String getClassName() {
            return tp.getClassName();
        }

        @Override
        public StackTraceElementProxy[] getStackTraceElementProxyArray() {
            return tp.getStackTraceElementProxyArray();
        }

        @Override
        public int getCommonFrames() {
            return tp.getCommonFrames();
        }

        @Override
        public IThrowableProxy getCause() {
            return safe(tp.getCause());
        }

        @Override
        public IThrowableProxy[] getSuppressed() {
            IThrowableProxy[] s = tp.getSuppressed();
            if (s == null) {
                return null;
            }
            IThrowableProxy[] out = new IThrowableProxy[s.length];
            for (int i = 0; i < s.length; i++) {
                out[i] = safe(s[i]);
            }
            return out;
        }

        @Override
        public boolean isCyclic() {
            return tp.isCyclic();
        }
    }
}
