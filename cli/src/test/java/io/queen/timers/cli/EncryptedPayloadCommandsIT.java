package io.queen.timers.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.bridge.crypto.EncryptionKey;
import io.queen.timers.bridge.crypto.PayloadCipher;
import io.queen.timers.log.codec.Compression;
import io.queen.timers.log.codec.Frame;
import io.queen.timers.log.codec.SegmentCodec;
import io.queen.timers.log.codec.UuidV7;
import io.queen.timers.log.push.Destination;
import io.queen.timers.log.push.LogPusher;
import io.queen.timers.sql.Migrations;
import io.queen.timers.testkit.PostgresDatabase;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** peek and tail open encrypted payloads when given the key (current or previous) and say "encrypted" when not. */
class EncryptedPayloadCommandsIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    static final String OLD_KEY = "a1".repeat(32);
    static final String NEW_KEY = "b2".repeat(32);
    /** The secret, as no timestamp, id or key id can spell it by chance ("4111" alone was in a time's microseconds). */
    static final String CARD = "4111-1111-1111-1111";
    static final String SECRET = "{\"card\":\"" + CARD + "\"}";
    static Map<String, String> env;
    static String oldKeyId;

    @BeforeAll
    static void stageAndFireEncryptedPayloads() throws Exception {
        env = Map.of("QUEEN_JDBC_URL", db.jdbcUrl(), "QUEEN_JDBC_USER", db.user(), "QUEEN_JDBC_PASSWORD", db.password());
        EncryptionKey old = EncryptionKey.fromHex(OLD_KEY, "test");
        oldKeyId = old.id();
        byte[] envelope = new PayloadCipher(old, List.of()).seal(SECRET.getBytes(StandardCharsets.UTF_8));
        try (Connection c = db.dataSource().getConnection(); PreparedStatement st = c.prepareStatement(
                "INSERT INTO queen.log_timers (queue, timer_key, deliver_at, txn, message_id, payload, payload_zstd, encrypted)"
                        + " VALUES ('vault', 'k1', now() + interval '1 hour', 't1', ?, ?, true, true)")) {
            st.setObject(1, UuidV7.next());
            st.setBytes(2, Compression.compress(envelope));
            st.executeUpdate();
        }
        new LogPusher(db.dataSource()).push(new Destination(Destination.DEFAULT_TENANT, "vault", "Default"),
                SegmentCodec.pack(List.of(new Frame(UuidV7.next(), null, "t1", "billing-svc", true, envelope))));
    }

    static Map<String, String> with(String key, String previous) {
        Map<String, String> e = new HashMap<>(env);
        e.put("QUEEN_ENCRYPTION_KEY", key);
        if (previous != null) {
            e.put("QUEEN_ENCRYPTION_KEYS_PREVIOUS", previous);
        }
        return e;
    }

    @Test
    void withoutAKeyBothSayEncryptedAndNameTheKeyId() {
        Cli peek = Cli.run(env, "peek", "-q", "vault", "-k", "k1");
        assertThat(peek.exitCode()).as(peek.err()).isZero();
        assertThat(peek.out()).contains("payload (encrypted, ").contains("key " + oldKeyId).doesNotContain(CARD);
        Cli tail = Cli.run(env, "tail", "-q", "vault", "--from", "0");
        assertThat(tail.exitCode()).as(tail.err()).isZero();
        assertThat(tail.out()).contains("(encrypted, ").contains("sub billing-svc").doesNotContain(CARD);
    }

    @Test
    void withTheKeyInUseOrAsAPreviousKeyBothOpenThePayload() {
        for (Map<String, String> e : List.of(with(OLD_KEY, null), with(NEW_KEY, OLD_KEY))) {
            Cli peek = Cli.run(e, "peek", "-q", "vault", "-k", "k1");
            assertThat(peek.out()).as(peek.err()).contains("payload " + SECRET);
            Cli tail = Cli.run(e, "tail", "-q", "vault", "--from", "0");
            assertThat(tail.out()).as(tail.err()).contains(SECRET);
        }
        Cli flag = Cli.run(env, "tail", "-q", "vault", "--from", "0", "--encryption-key", OLD_KEY, "--json");
        assertThat(flag.out()).contains("\"encrypted\":true").contains(CARD);
    }

    @Test
    void aWrongKeySaysWhyItCannotOpenAndABadKeyIsOneLine() {
        Cli tail = Cli.run(with(NEW_KEY, null), "tail", "-q", "vault", "--from", "0");
        assertThat(tail.out()).contains("cannot open: sealed with key " + oldKeyId).doesNotContain(CARD);
        Cli bad = Cli.run(with("abc", null), "tail", "-q", "vault", "--from", "0");
        assertThat(bad.exitCode()).isEqualTo(1);
        assertThat(bad.err()).startsWith("error: setting encryption.key").contains("64 hex characters");
    }
}
