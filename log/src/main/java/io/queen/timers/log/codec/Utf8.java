package io.queen.timers.log.codec;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Strict UTF-8 both ways. {@link String#getBytes} would silently turn an unpaired surrogate into
 * '?', and {@code new String(bytes, UTF_8)} would silently turn a bad byte into U+FFFD: either makes
 * a txn that hashes and compares differently from the one the producer gave, so both are errors.
 */
final class Utf8 {

    private Utf8() {}

    static byte[] encode(String s, String what) {
        if (!hasSurrogate(s)) {
            return s.getBytes(StandardCharsets.UTF_8); // exact for strings without surrogates (the fast path)
        }
        try {
            ByteBuffer b = StandardCharsets.UTF_8.newEncoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .encode(CharBuffer.wrap(s));
            byte[] out = new byte[b.remaining()];
            b.get(out);
            return out;
        } catch (CharacterCodingException e) {
            throw new CodecException(what + " is not encodable as UTF-8 (unpaired surrogate)", e);
        }
    }

    static String decode(byte[] buf, int offset, int length, String what) {
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(buf, offset, length))
                    .toString();
        } catch (CharacterCodingException e) {
            throw new CodecException(what + " at byte offset " + offset + " is not valid UTF-8", e);
        }
    }

    private static boolean hasSurrogate(String s) {
        for (int i = 0; i < s.length(); i++) {
            if (Character.isSurrogate(s.charAt(i))) {
                return true;
            }
        }
        return false;
    }
}
