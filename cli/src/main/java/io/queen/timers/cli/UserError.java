package io.queen.timers.cli;

/** Something the user can fix (an argument that parses but makes no sense). Printed as one line. */
public final class UserError extends RuntimeException {
    public UserError(String message) {
        super(message);
    }
}
