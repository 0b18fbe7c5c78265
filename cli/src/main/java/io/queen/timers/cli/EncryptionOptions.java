package io.queen.timers.cli;

import io.queen.timers.bridge.crypto.EncryptionSettings;
import io.queen.timers.bridge.crypto.PayloadCipher;
import io.queen.timers.core.config.ConfigDef;
import io.queen.timers.core.config.ConfigException;
import io.queen.timers.core.config.ConfigLoader;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import picocli.CommandLine.Option;

/**
 * The keys an operator tool opens encrypted payloads with: the bridge's own settings
 * ({@code encryption.key}, {@code encryption.keys.previous}, from the {@code --config} file or
 * {@code QUEEN_ENCRYPTION_KEY} / {@code QUEEN_ENCRYPTION_KEYS_PREVIOUS}), and {@code --encryption-key} on top.
 * Without any key, an encrypted payload is shown as "encrypted", never guessed at.
 */
public final class EncryptionOptions {

    @Option(names = "--encryption-key", paramLabel = "HEX",
            description = "Key to open encrypted payloads with (else encryption.key / QUEEN_ENCRYPTION_KEY; older keys: "
                    + "QUEEN_ENCRYPTION_KEYS_PREVIOUS). Prefer the environment: a flag shows in the process list.")
    String key;

    /** @param config the --config file of the command's database options, or null */
    public Optional<PayloadCipher> cipher(Map<String, String> env, Path config) {
        ConfigDef def = EncryptionSettings.definition().select(EncryptionSettings.KEY, EncryptionSettings.KEYS_PREVIOUS);
        Map<String, String> merged = new HashMap<>(env);
        DatabaseOptions.put(merged, def, EncryptionSettings.KEY, key);
        try {
            return EncryptionSettings.from(ConfigLoader.load(def, config, merged)).cipher();
        } catch (ConfigException e) {
            throw new UserError(e.getMessage());
        }
    }

    /**
     * An encrypted payload for a person: the plaintext when a key opens it, else a line that says it is
     * encrypted (with the key id the envelope names) and, when opening failed, why.
     */
    static String show(byte[] envelope, Optional<PayloadCipher> cipher) {
        String keyId = PayloadCipher.keyIdOf(envelope).map(id -> ", key " + id).orElse("");
        if (cipher.isEmpty()) {
            return "(encrypted, " + envelope.length + " bytes" + keyId + "; give the key to read it: QUEEN_ENCRYPTION_KEY)";
        }
        try {
            return new String(cipher.get().open(envelope), java.nio.charset.StandardCharsets.UTF_8);
        } catch (PayloadCipher.EnvelopeException e) {
            return "(encrypted, " + envelope.length + " bytes" + keyId + "; cannot open: " + e.getMessage() + ")";
        }
    }
}
