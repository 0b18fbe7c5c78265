package io.queen.timers.log.codec;

/**
 * The codec's one error type: a segment that cannot be packed (a txn or producer sub longer than
 * 65535 UTF-8 bytes, no frames, a string that is not encodable as UTF-8) or a blob that does not
 * decode (bad zstd, a truncated frame, a frame running past the buffer, a body shorter than its
 * fixed part, trailing bytes, unknown flags, invalid UTF-8). Unpack messages name the byte offset
 * in the decompressed buffer, so a corrupt segment can be looked at with a hex dump.
 *
 * <p>Unchecked because nothing can be retried: the same bytes fail the same way, so a caller treats
 * it as a permanent error of the segment (or of the timer whose frame it is).
 */
public final class CodecException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public CodecException(String message) {
        super(message);
    }

    public CodecException(String message, Throwable cause) {
        super(message, cause);
    }
}
