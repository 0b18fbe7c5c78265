package io.queen.timers.bridge.crypto;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import io.queen.timers.testkit.IndependentGcm;
import org.bouncycastle.crypto.InvalidCipherTextException;
import org.junit.jupiter.api.Test;

class PayloadCipherTest {

    static final String KEY_HEX = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
    static final String OLD_HEX = "ff".repeat(32);
    static final byte[] PAYLOAD = "{\"orderId\":42,\"card\":\"4111-1111\"}".getBytes(StandardCharsets.UTF_8);
    static final ObjectMapper JSON = new ObjectMapper();

    final EncryptionKey key = EncryptionKey.fromHex(KEY_HEX, "encryption.key");
    final PayloadCipher cipher = new PayloadCipher(key, List.of());

    @Test
    void envelopeIsQueensShapeAndOpensWithAnIndependentAesGcm() throws Exception {
        byte[] sealed = cipher.seal(PAYLOAD);
        JsonNode env = JSON.readTree(sealed);
        assertThat(env.fieldNames()).toIterable().containsExactlyInAnyOrder("encrypted", "iv", "authTag", "keyId");
        assertThat(env.get("keyId").asText()).isEqualTo(key.id()).hasSize(16);
        assertThat(new String(sealed, StandardCharsets.UTF_8)).doesNotContain("4111").doesNotContain("orderId");

        IndependentGcm.Opened opened = IndependentGcm.open(sealed, HexFormat.of().parseHex(KEY_HEX));
        assertThat(opened.ivBytes()).isEqualTo(16);
        assertThat(opened.tagBytes()).isEqualTo(16);
        assertThat(opened.plaintext()).isEqualTo(PAYLOAD);
        assertThat(Base64.getDecoder().decode(env.get("encrypted").asText())).hasSize(PAYLOAD.length); // GCM: no padding
        assertThat(cipher.open(sealed)).isEqualTo(PAYLOAD);
    }

    @Test
    void everySealHasAFreshIv() throws Exception {
        assertThat(JSON.readTree(cipher.seal(PAYLOAD)).get("iv")).isNotEqualTo(JSON.readTree(cipher.seal(PAYLOAD)).get("iv"));
    }

    @Test
    void tamperedCiphertextTagOrIvFailsAuthenticationInBothImplementations() throws Exception {
        for (String field : List.of("encrypted", "authTag", "iv")) {
            ObjectNode env = (ObjectNode) JSON.readTree(cipher.seal(PAYLOAD));
            byte[] b = Base64.getDecoder().decode(env.get(field).asText());
            b[b.length / 2] ^= 0x01;
            env.put(field, Base64.getEncoder().encodeToString(b));
            byte[] tampered = JSON.writeValueAsBytes(env);
            assertThatThrownBy(() -> cipher.open(tampered)).as(field)
                    .isInstanceOf(PayloadCipher.EnvelopeException.class).hasMessageContaining("authentication failed");
            assertThatThrownBy(() -> IndependentGcm.open(tampered, HexFormat.of().parseHex(KEY_HEX))).as(field)
                    .isInstanceOf(InvalidCipherTextException.class);
        }
    }

    @Test
    void rotationOpensOldEnvelopesByTheirKeyIdAndSealsWithTheNewKey() throws Exception {
        PayloadCipher before = new PayloadCipher(EncryptionKey.fromHex(OLD_HEX, "x"), List.of());
        byte[] old = before.seal(PAYLOAD);
        PayloadCipher after = new PayloadCipher(key, List.of(EncryptionKey.fromHex(OLD_HEX, "x")));
        assertThat(after.open(old)).isEqualTo(PAYLOAD);
        assertThat(PayloadCipher.keyIdOf(after.seal(PAYLOAD))).contains(key.id());
        assertThatThrownBy(() -> cipher.open(old)).isInstanceOf(PayloadCipher.EnvelopeException.class)
                .hasMessageContaining("not among the configured keys");
    }

    @Test
    void queenWrittenEnvelopeWithoutKeyIdOpensByTryingEveryKey() throws Exception {
        ObjectNode env = (ObjectNode) JSON.readTree(cipher.seal(PAYLOAD));
        env.remove("keyId");
        PayloadCipher reader = new PayloadCipher(null, List.of(EncryptionKey.fromHex(OLD_HEX, "x"), key));
        assertThat(reader.open(JSON.writeValueAsBytes(env))).isEqualTo(PAYLOAD);
    }

    @Test
    void keyMustBe64HexCharactersAndTheErrorNamesTheSetting() {
        assertThatThrownBy(() -> EncryptionKey.fromHex("abcd", "encryption.key")).hasMessageContaining("encryption.key")
                .hasMessageContaining("64 hex characters");
        assertThatThrownBy(() -> EncryptionKey.fromHex("zz".repeat(32), "encryption.key")).hasMessageContaining("not all hex");
        assertThat(key.toString()).doesNotContain(KEY_HEX);
    }

    @Test
    void policyMatchesPatternsOrQueensFlag() {
        EncryptionPolicy p = new EncryptionPolicy(List.of("payments.*", "exact"));
        assertThat(p.requires("payments.cards", false)).isTrue();
        assertThat(p.requires("exact", false)).isTrue();
        assertThat(p.requires("exactly", false)).isFalse();
        assertThat(p.requires("orders", false)).isFalse();
        assertThat(p.requires("orders", true)).isTrue();
        assertThat(new EncryptionPolicy(List.of("a.b*")).requires("aXb", false)).isFalse(); // '.' is literal
    }
}
