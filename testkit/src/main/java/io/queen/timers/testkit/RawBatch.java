package io.queen.timers.testkit;

import com.github.luben.zstd.ZstdOutputStream;
import com.github.luben.zstd.ZstdOutputStreamNoFinalizer;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.compress.Lz4BlockOutputStream;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ResponseHeader;
import org.apache.kafka.common.utils.internals.ByteBufferOutputStream;
import org.xerial.snappy.Snappy;
import org.xerial.snappy.SnappyOutputStream;

/**
 * One producer batch built byte by byte (Kafka's record batch v2, as its protocol documentation lays it out), zstd unless
 * another codec is asked for, and sent as a raw Produce request: what a hostile producer can send and the Java producer
 * would not build, such as a record whose value is hundreds of MB of one letter among small records, a few KB on the
 * wire, a record of hundreds of thousands of headers, or one whose length lies; and a codec's stream framed with the sizes a
 * producer chooses ({@link Compressor}): 4 MiB lz4 blocks, snappy chunks of any size or one raw block, a zstd frame
 * declaring any window. A big value or header run is streamed through the compressor, never held (uncompressed, the batch
 * itself holds it; raw snappy holds it whole). Plaintext listeners only.
 */
public final class RawBatch {

    /**
     * One record of the batch: key, headers (name, value pairs), and a value given as bytes or as a run of one byte; a
     * run that is {@code declaredOnly} is declared and not written (a record that lies about its length). After the
     * listed headers come {@code headerRun}'s (none when null), and the record's length is declared {@code lengthLie}
     * bytes off the truth (0: honest).
     */
    public record Rec(byte[] key, List<String[]> headers, byte[] value, long runLength, byte runByte, boolean declaredOnly,
                      HeaderRun headerRun, int lengthLie) {
        public static Rec of(byte[] key, byte[] value, List<String[]> headers) {
            return new Rec(key, headers, value, -1, (byte) 0, false, null, 0);
        }

        /** A value of {@code length} times {@code b}: its declared size is {@code length}, and it is all there. */
        public static Rec run(byte[] key, long length, byte b, List<String[]> headers) {
            return new Rec(key, headers, null, length, b, false, null, 0);
        }

        /**
         * A value that declares {@code length} bytes and holds none: the stream goes on with the record's headers and the
         * next records, which a reader that believes the length takes for the value.
         */
        public static Rec declaring(byte[] key, long length, List<String[]> headers) {
            return new Rec(key, headers, null, length, (byte) 0, true, null, 0);
        }

        /** The same record with {@code count} more headers, each a name of {@code nameBytes} and a value of {@code valueBytes}. */
        public Rec withHeaderRun(int count, int nameBytes, int valueBytes) {
            return new Rec(key, headers, value, runLength, runByte, declaredOnly, new HeaderRun(count, nameBytes, valueBytes), lengthLie);
        }

        /** The same record declaring a length {@code by} bytes off what it holds (a lie the rest of its fields agree with). */
        public Rec withLengthLie(int by) {
            return new Rec(key, headers, value, runLength, runByte, declaredOnly, headerRun, by);
        }
    }

    /**
     * {@code count} headers, each named by {@code nameBytes} letters 'h' and valued {@code valueBytes} letters 'v' (-1: a
     * null value): 540,000 empty ones are 1.08 MB of record and a few KB of zstd.
     */
    public record HeaderRun(int count, int nameBytes, int valueBytes) {}

    /** The batch's compression, as its attributes' low bits name it. */
    public enum Codec {
        NONE(Compression.NONE), GZIP(Compression.gzip().build()), SNAPPY(Compression.snappy().build()),
        LZ4(Compression.lz4().build()), ZSTD(Compression.zstd().build());

        final Compression compression;

        Codec(Compression compression) {
            this.compression = compression;
        }
    }

    /** A codec's stream over the batch's body: how its records are compressed. */
    @FunctionalInterface
    public interface Compressor {
        OutputStream wrap(OutputStream body) throws IOException;
    }

    /**
     * Lz4 frames whose descriptor declares blocks of {@code blockBytes} (64 KiB, 256 KiB, 1 MiB or 4 MiB: Kafka's producer
     * writes 64 KiB, Go's Sarama 4 MiB), through Kafka's own frame writer.
     */
    public static Compressor lz4Blocks(int blockBytes) {
        int id = switch (blockBytes) {
            case 64 << 10 -> 4;
            case 256 << 10 -> 5;
            case 1 << 20 -> 6;
            case 4 << 20 -> 7;
            default -> throw new IllegalArgumentException("lz4 blocks are 64 KiB, 256 KiB, 1 MiB or 4 MiB, not " + blockBytes);
        };
        return body -> new Lz4BlockOutputStream(body, id, 9, false, false);
    }

    /** Snappy-java's framing with chunks of {@code chunkBytes} uncompressed (Kafka's producer writes 32 KiB). */
    public static Compressor snappyChunks(int chunkBytes) {
        return body -> new SnappyOutputStream(body, chunkBytes);
    }

    /** Raw snappy: the whole body one block, as librdkafka writes it (it declares the body's length uncompressed). */
    public static Compressor snappyRaw() {
        return body -> new ByteArrayOutputStream() {
            @Override
            public void close() throws IOException {
                body.write(Snappy.compress(toByteArray()));
                body.close();
            }
        };
    }

    /** One zstd frame declaring a window of 2^{@code windowLog} bytes (its content size unknown, as a streaming producer's). */
    public static Compressor zstdWindow(int windowLog) {
        return body -> new ZstdOutputStreamNoFinalizer(body).setWindowLog(windowLog);
    }

    /**
     * A codec's stream that is not one: {@code body} as the batch's compressed records, whatever the records written were
     * (they give the batch its count and last offset). What a producer that lies in its codec's own framing sends.
     */
    public static Compressor bytes(byte[] body) {
        return out -> new OutputStream() {
            @Override
            public void write(int b) {
                // the records are not what the batch holds
            }

            @Override
            public void write(byte[] b, int off, int len) {
                // the records are not what the batch holds
            }

            @Override
            public void close() throws IOException {
                out.write(body);
                out.close();
            }
        };
    }

    private RawBatch() {}

    /** Builds the batch (zstd, CreateTime {@code timestampMs}) and produces it to {@code topic}/{@code partition}; acks=all. */
    public static void send(String bootstrap, String topic, int partition, long timestampMs, List<Rec> records) throws IOException {
        send(bootstrap, topic, partition, build(Codec.ZSTD, timestampMs, records));
    }

    /** Produces a batch {@link #build} made to {@code topic}/{@code partition}; acks=all. */
    public static void send(String bootstrap, String topic, int partition, ByteBuffer batch) throws IOException {
        send(bootstrap, topic, Map.of(partition, batch));
    }

    /**
     * Produces one batch {@link #build} made to each partition of {@code topic} ({@code batches}: partition → batch), in one
     * Produce request per leader, so that they are in the log together; acks=all.
     */
    public static void send(String bootstrap, String topic, Map<Integer, ByteBuffer> batches) throws IOException {
        Map<Integer, Node> leaders = leaders(bootstrap, topic);
        Map<Node, List<ProduceRequestData.PartitionProduceData>> byLeader = new LinkedHashMap<>();
        batches.forEach((partition, batch) -> byLeader.computeIfAbsent(leaders.get(partition), n -> new ArrayList<>())
                .add(new ProduceRequestData.PartitionProduceData().setIndex(partition).setRecords(MemoryRecords.readableRecords(batch.duplicate()))));
        for (Map.Entry<Node, List<ProduceRequestData.PartitionProduceData>> e : byLeader.entrySet()) {
            produce(e.getKey(), topic, e.getValue());
        }
    }

    private static void produce(Node leader, String topic, List<ProduceRequestData.PartitionProduceData> partitions) throws IOException {
        short v = 9; // topics named (v13 names them by id); every broker of Kafka 3.x and 4.x takes it
        ProduceRequestData data = new ProduceRequestData().setAcks((short) -1).setTimeoutMs(30_000);
        ProduceRequestData.TopicProduceData t = new ProduceRequestData.TopicProduceData().setName(topic).setPartitionData(partitions);
        data.topicData().add(t);
        ByteBuffer req = new ProduceRequest.Builder(v, v, data).build(v)
                .serializeWithHeader(new RequestHeader(ApiKeys.PRODUCE, v, "raw-batch", 1));
        try (Socket s = new Socket(leader.host(), leader.port())) {
            s.setSoTimeout(60_000);
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            out.writeInt(req.remaining());
            out.write(req.array(), req.arrayOffset() + req.position(), req.remaining());
            out.flush();
            DataInputStream in = new DataInputStream(s.getInputStream());
            byte[] resp = new byte[in.readInt()];
            in.readFully(resp);
            ByteBuffer rb = ByteBuffer.wrap(resp);
            ResponseHeader.parse(rb, ApiKeys.PRODUCE.responseHeaderVersion(v));
            ProduceResponse pr = ProduceResponse.parse(new ByteBufferAccessor(rb), v);
            for (ProduceResponseData.TopicProduceResponse tr : pr.data().responses()) {
                for (ProduceResponseData.PartitionProduceResponse p : tr.partitionResponses()) {
                    if (p.errorCode() != 0) {
                        throw new IOException("produce to partition " + p.index() + " refused: error " + p.errorCode() + " "
                                + p.errorMessage());
                    }
                }
            }
        }
    }

    /** The batch's bytes, zstd: the 61-byte header (base offset 0), then the records through one zstd stream. */
    public static ByteBuffer build(long timestampMs, List<Rec> records) throws IOException {
        return build(Codec.ZSTD, timestampMs, records);
    }

    /** The batch's bytes: the 61-byte header (base offset 0), then the records, through one stream of {@code codec}. */
    public static ByteBuffer build(Codec codec, long timestampMs, List<Rec> records) throws IOException {
        return build(codec, codec == Codec.ZSTD ? ZstdOutputStream::new : body -> codec.compression.wrapForOutput(
                (ByteBufferOutputStream) body, (byte) 2), timestampMs, records);
    }

    /**
     * The batch's bytes: the 61-byte header (base offset 0) naming {@code codec}, then the records through
     * {@code compressor}'s stream (which must be that codec's, or the batch lies about its codec).
     */
    public static ByteBuffer build(Codec codec, Compressor compressor, long timestampMs, List<Rec> records) throws IOException {
        ByteBufferOutputStream compressed = new ByteBufferOutputStream(1024);
        try (OutputStream z = compressor.wrap(compressed)) {
            DataOutputStream out = new DataOutputStream(new BufferedOutputStream(z, 1 << 16));
            for (int i = 0; i < records.size(); i++) {
                writeRecord(out, i, records.get(i));
            }
            out.flush();
        }
        ByteBuffer written = compressed.buffer().flip();
        int bodyLength = written.remaining();
        ByteBuffer b = ByteBuffer.allocate(61 + bodyLength);
        b.putLong(0); // base offset: the broker assigns
        b.putInt(61 - 12 + bodyLength); // batch length: after this field
        b.putInt(-1); // partition leader epoch
        b.put((byte) 2); // magic
        int crcAt = b.position();
        b.putInt(0);
        b.putShort((short) codec.ordinal()); // attributes: the codec, CreateTime, not transactional
        b.putInt(records.size() - 1); // last offset delta
        b.putLong(timestampMs);
        b.putLong(timestampMs);
        b.putLong(-1L); // producer id
        b.putShort((short) -1);
        b.putInt(-1); // base sequence
        b.putInt(records.size());
        b.put(written);
        CRC32C crc = new CRC32C();
        crc.update(b.array(), crcAt + 4, b.capacity() - crcAt - 4);
        b.putInt(crcAt, (int) crc.getValue());
        b.flip();
        return b;
    }

    private static void writeRecord(DataOutputStream out, int offsetDelta, Rec r) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        head.write(0); // attributes
        varlong(head, 0); // timestamp delta
        varlong(head, offsetDelta);
        bytesField(head, r.key());
        long valueLength = r.value() != null ? r.value().length : r.runLength();
        varlong(head, valueLength);
        byte[] before = head.toByteArray();
        ByteArrayOutputStream tail = new ByteArrayOutputStream();
        List<String[]> headers = r.headers() == null ? List.of() : r.headers();
        HeaderRun run = r.headerRun();
        varlong(tail, headers.size() + (run == null ? 0L : run.count()));
        for (String[] h : headers) {
            bytesField(tail, h[0].getBytes(StandardCharsets.UTF_8));
            bytesField(tail, h[1] == null ? null : h[1].getBytes(StandardCharsets.UTF_8));
        }
        byte[] after = tail.toByteArray();
        byte[] oneOfRun = new byte[0];
        if (run != null) {
            ByteArrayOutputStream h = new ByteArrayOutputStream();
            bytesField(h, repeat((byte) 'h', run.nameBytes()));
            bytesField(h, run.valueBytes() < 0 ? null : repeat((byte) 'v', run.valueBytes()));
            oneOfRun = h.toByteArray();
        }
        long bodySize = before.length + Math.max(0, valueLength) + after.length + (run == null ? 0L : (long) run.count() * oneOfRun.length);
        if (bodySize > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("a record body is at most 2 GiB");
        }
        varlong(out, bodySize + r.lengthLie());
        out.write(before);
        if (r.value() != null) {
            out.write(r.value());
        } else if (!r.declaredOnly()) {
            byte[] chunk = new byte[1 << 16];
            java.util.Arrays.fill(chunk, r.runByte());
            for (long left = r.runLength(); left > 0; left -= chunk.length) {
                out.write(chunk, 0, (int) Math.min(left, chunk.length));
            }
        }
        out.write(after);
        for (int i = 0; run != null && i < run.count(); i++) {
            out.write(oneOfRun);
        }
    }

    private static byte[] repeat(byte b, int n) {
        byte[] out = new byte[n];
        java.util.Arrays.fill(out, b);
        return out;
    }

    private static void bytesField(OutputStream out, byte[] b) throws IOException {
        if (b == null) {
            varlong(out, -1);
        } else {
            varlong(out, b.length);
            out.write(b);
        }
    }

    /** Zigzag varint, as Kafka's records write every length and delta. */
    private static void varlong(OutputStream out, long v) throws IOException {
        long z = (v << 1) ^ (v >> 63);
        while ((z & ~0x7FL) != 0) {
            out.write((int) ((z & 0x7F) | 0x80));
            z >>>= 7;
        }
        out.write((int) z);
    }

    private static Map<Integer, Node> leaders(String bootstrap, String topic) throws IOException {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            Map<Integer, Node> out = new HashMap<>();
            for (TopicPartitionInfo p : admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions()) {
                out.put(p.partition(), p.leader());
            }
            return out;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IOException(e.getCause());
        }
    }
}
