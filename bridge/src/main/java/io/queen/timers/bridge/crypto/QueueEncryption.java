package io.queen.timers.bridge.crypto;

import io.queen.timers.core.config.ConfigException;
import io.queen.timers.sql.SqlFile;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * Encryption at schedule time, the way Queen's push does it: the destination queue decides
 * ({@link EncryptionPolicy}), the payload is sealed before it is stored ({@link PayloadCipher}), the
 * row says {@code encrypted = true}, the fire carries it as it is (frame flag 4) and never decrypts.
 * A schedule whose queue needs encryption while no key is configured is never stored in clear: it is
 * rejected ({@code encryption_unavailable}); and when that can be known at start, the bridge does not
 * start ({@link #checkAtStart}).
 */
public final class QueueEncryption {

    private static final String ENABLED = SqlFile.load(QueueEncryption.class, "enabled_queues.sql");
    private static final String ANY_ENABLED = SqlFile.load(QueueEncryption.class, "any_enabled_queue.sql");
    private static final String PUBLISH = SqlFile.load(QueueEncryption.class, "publish_patterns.sql");

    /** A destination queue of one tenant. */
    public record QueueRef(UUID tenant, String queue) {}

    private final EncryptionPolicy policy;
    private final PayloadCipher cipher;

    /** @param cipher the configured keys, or empty when none is set */
    public QueueEncryption(EncryptionPolicy policy, Optional<PayloadCipher> cipher) {
        this.policy = policy;
        this.cipher = cipher.filter(c -> c.currentKeyId().isPresent()).orElse(null);
    }

    /** No patterns and no key: seals nothing, but still refuses to store a queue Queen marks encrypted in clear. */
    public static QueueEncryption none() {
        return new QueueEncryption(new EncryptionPolicy(List.of()), Optional.empty());
    }

    /** True when a key to seal with is configured. */
    public boolean canSeal() {
        return cipher != null;
    }

    /**
     * A clear start-up error when encryption is required and no key is configured: patterns are set, or
     * queen.queues already has queues with encryption_enabled.
     */
    public void checkAtStart(DataSource dataSource) throws SQLException {
        if (cipher != null) {
            return;
        }
        if (policy.hasPatterns()) {
            throw new ConfigException("setting " + EncryptionSettings.QUEUES + " names queues to encrypt, but "
                    + EncryptionSettings.KEY + " (env QUEEN_ENCRYPTION_KEY) is not set: schedules for them would be rejected");
        }
        List<String> named = new ArrayList<>();
        try (Connection c = dataSource.getConnection(); PreparedStatement st = c.prepareStatement(ANY_ENABLED);
             ResultSet rs = st.executeQuery()) {
            while (rs.next()) {
                named.add(rs.getObject("tenant_id", UUID.class) + "/" + rs.getString("name"));
            }
        }
        if (!named.isEmpty()) {
            throw new ConfigException("queen.queues has queues with encryption_enabled (" + String.join(", ", named)
                    + (named.size() == 5 ? ", ..." : "") + ") but " + EncryptionSettings.KEY
                    + " (env QUEEN_ENCRYPTION_KEY) is not set: their schedules cannot be stored encrypted");
        }
    }

    /**
     * Writes this group's encryption.queues where the fire reads them (queen.bridge_sealed_queues), before the bridge consumes:
     * a timer staged clear before its queue matched them is then dead-lettered at the fire, never pushed in
     * clear (docs/security.md#payload-encryption). No patterns removes the group's row.
     */
    public void publishPatterns(DataSource dataSource, String group) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement st = c.prepareStatement(PUBLISH)) {
            st.setString(1, group);
            st.setArray(2, c.createArrayOf("text", policy.likePatterns().toArray()));
            st.execute();
        }
    }

    /** The queues among {@code queues} whose payloads must be sealed, read in {@code c}'s transaction. */
    public Set<QueueRef> required(Connection c, Collection<QueueRef> queues) throws SQLException {
        Set<QueueRef> out = new HashSet<>();
        if (queues.isEmpty()) {
            return out;
        }
        List<UUID> tenants = new ArrayList<>(queues.size());
        List<String> names = new ArrayList<>(queues.size());
        for (QueueRef q : queues) {
            tenants.add(q.tenant());
            names.add(q.queue());
        }
        Set<QueueRef> enabled = new HashSet<>();
        try (PreparedStatement st = c.prepareStatement(ENABLED)) {
            st.setArray(1, c.createArrayOf("uuid", tenants.toArray()));
            st.setArray(2, c.createArrayOf("text", names.toArray()));
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    enabled.add(new QueueRef(rs.getObject("tenant_id", UUID.class), rs.getString("name")));
                }
            }
        }
        for (QueueRef q : queues) {
            if (policy.requires(q.queue(), enabled.contains(q))) {
                out.add(q);
            }
        }
        return out;
    }

    /** The envelope to store for {@code payload}; only when {@link #canSeal()}. */
    public byte[] seal(byte[] payload) {
        if (cipher == null) {
            throw new IllegalStateException("no encryption key: a payload that needs sealing is never stored in clear");
        }
        return cipher.seal(payload);
    }
}
