package io.queen.timers.bridge.crypto;

import static io.queen.timers.core.config.ConfigDef.Type.LIST;
import static io.queen.timers.core.config.ConfigDef.Type.PASSWORD;

import io.queen.timers.core.config.Config;
import io.queen.timers.core.config.ConfigDef;
import io.queen.timers.core.config.ConfigException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The payload encryption keys (docs/security.md#payload-encryption): the bridge seals with {@link #KEY}; the
 * operator tools open with it and with {@link #KEYS_PREVIOUS}. The environment names are Queen's
 * ({@code QUEEN_ENCRYPTION_KEY}), so one secret serves the Queen broker and this bridge.
 *
 * @param key          {@link #KEY}, never printed
 * @param keysPrevious {@link #KEYS_PREVIOUS}, never printed
 * @param queues       {@link #QUEUES} (empty where a tool selects only the keys)
 */
public record EncryptionSettings(String key, String keysPrevious, List<String> queues) {

    public static final String KEY = "encryption.key";
    public static final String KEYS_PREVIOUS = "encryption.keys.previous";
    public static final String QUEUES = "encryption.queues";

    public static ConfigDef definition() {
        return new ConfigDef()
                .define(KEY, PASSWORD, "", null, "QUEEN_ENCRYPTION_KEY",
                        "AES-256 key (64 hex characters, Queen's QUEEN_ENCRYPTION_KEY) that payloads of encrypted queues are sealed "
                                + "with at schedule time. Empty: no key; then a queue that needs encryption is a start-up error "
                                + "(encryption.queues, or queen.queues.encryption_enabled) or, if enabled later, a rejected schedule. Never logged.")
                .define(KEYS_PREVIOUS, PASSWORD, "", null, "QUEEN_ENCRYPTION_KEYS_PREVIOUS",
                        "Comma-separated older keys (64 hex characters each) after a rotation: never used to seal, only by the "
                                + "operator tools (peek, tail) to open payloads sealed before. Never logged.")
                .define(QUEUES, LIST, "", null,
                        "Comma-separated queue names or patterns ('*' = any characters, e.g. payments.*) whose payloads are "
                                + "encrypted, in addition to every queue with queen.queues.encryption_enabled = true.");
    }

    public static EncryptionSettings from(Config config) {
        return new EncryptionSettings(config.string(KEY), config.string(KEYS_PREVIOUS),
                config.definition().key(QUEUES) != null ? config.list(QUEUES) : List.of());
    }

    /** The cipher the settings describe: the key in use and the older keys; empty when no key is set at all. */
    public Optional<PayloadCipher> cipher() {
        EncryptionKey current;
        List<EncryptionKey> older = new ArrayList<>();
        try {
            current = key.isBlank() ? null : EncryptionKey.fromHex(key, KEY + " (env QUEEN_ENCRYPTION_KEY)");
            for (String k : keysPrevious.split(",")) {
                if (!k.isBlank()) {
                    older.add(EncryptionKey.fromHex(k, KEYS_PREVIOUS + " (env QUEEN_ENCRYPTION_KEYS_PREVIOUS)"));
                }
            }
        } catch (IllegalArgumentException e) {
            throw new ConfigException(e.getMessage());
        }
        return current == null && older.isEmpty() ? Optional.empty() : Optional.of(new PayloadCipher(current, older));
    }

    /** The keys masked. */
    @Override
    public String toString() {
        return "EncryptionSettings[key=***, keysPrevious=***, queues=" + queues + "]";
    }
}
