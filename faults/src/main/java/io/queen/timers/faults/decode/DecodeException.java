package io.queen.timers.faults.decode;

/** A segment that does not follow docs/formats.md; the message names the byte offset where it stops following it. */
public final class DecodeException extends RuntimeException {

    public DecodeException(String message) {
        super(message);
    }
}
