package io.queen.timers.faults.decode;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The committed byte vectors of the log's segment format (issue 38 point 3) and the values they hold. A vector is a
 * text file beside this class: {@code #} comments, then {@code key: value} lines, a key repeated to continue its
 * value (the blob's hex, 64 digits a line). {@link SegmentVectorsWriter} writes them; {@link SegmentVectorsTest} reads
 * only the committed bytes.
 */
final class SegmentVectors {

    /** Segments packed by the product's writer ({@code SegmentCodec.pack}, the sweeper's packer's call). */
    static final String PRODUCT = "product-pack.vector";
    /** A segment row as {@code queen.log_push_v1} stored it in a migrated database, with its offsets and txn hashes. */
    static final String LOG_PUSH = "log-push-v1.vector";

    static final String TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";

    /**
     * Every part of the frame once: no flag; flag 1 (trace id); flag 2 with a txn of 2-, 3- and 4-byte UTF-8; all three
     * flags with an empty txn and an empty payload; and a compressible payload longer than the rest.
     */
    static final List<DecodedFrame> PRODUCT_FRAMES = List.of(
            new DecodedFrame(UUID.fromString("0193a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b"), null, "remind-order-42", null, false,
                    utf8("{\"orderId\":42}")),
            new DecodedFrame(UUID.fromString("0193a1b2-c3d4-7e60-9b1c-2d3e4f506172"), TRACE, "txn-0001", null, false, utf8("{\"n\":1}")),
            new DecodedFrame(UUID.fromString("0193a1b2-c3d5-7000-a000-000000000001"), null, "zahlung-\u00fc-\u20ac-\ud83d\ude00",
                    "svc:billing", false, utf8("\"text\"")),
            new DecodedFrame(UUID.fromString("0193a1b2-c3d5-7001-bfff-ffffffffffff"), TRACE, "", "sub", true, new byte[0]),
            new DecodedFrame(UUID.fromString("0193a1b2-c3d6-7abc-8def-0123456789ab"), null, "big", null, false,
                    utf8("{\"pad\":\"" + "ab".repeat(200) + "\"}")));

    /** What the sweeper packs for one-shot timers: message id, txn, compact JSON payload. */
    static final List<DecodedFrame> LOG_PUSH_FRAMES = List.of(
            DecodedFrame.of(UUID.fromString("0193a1b3-0000-7000-8000-00000000000a"), "push-a", utf8("{\"k\":\"a\"}")),
            DecodedFrame.of(UUID.fromString("0193a1b3-0000-7001-8000-00000000000b"), "push-b", utf8("{\"k\":\"b\"}")),
            DecodedFrame.of(UUID.fromString("0193a1b3-0000-7002-8000-00000000000c"), "push-c", utf8("[1,2,3]")));

    private SegmentVectors() {}

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** A vector's fields by key; the hex ones are still hex. */
    static Map<String, String> read(String name) {
        try (InputStream in = SegmentVectors.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("no vector " + name + " beside " + SegmentVectors.class.getName());
            }
            Map<String, String> fields = new LinkedHashMap<>();
            for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                if (line.isBlank() || line.startsWith("#")) {
                    continue;
                }
                int colon = line.indexOf(": ");
                fields.merge(line.substring(0, colon), line.substring(colon + 2).strip(), String::concat);
            }
            return fields;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static byte[] hex(String hex) {
        return HexFormat.of().parseHex(hex);
    }

    /** Writes a vector into the module's test resources (the writer runs with the module as working directory). */
    static void write(String name, List<String> comments, Map<String, String> fields) throws IOException {
        List<String> lines = new ArrayList<>();
        comments.forEach(c -> lines.add("# " + c));
        fields.forEach((k, v) -> {
            for (int i = 0; i < Math.max(1, v.length()); i += 64) {
                lines.add(k + ": " + v.substring(i, Math.min(v.length(), i + 64)));
            }
        });
        Path file = Path.of("src/test/resources", SegmentVectors.class.getPackageName().replace('.', '/'), name);
        Files.createDirectories(file.getParent());
        Files.writeString(file, String.join("\n", lines) + "\n");
    }
}
