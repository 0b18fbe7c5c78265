package io.queen.timers.release;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;

/**
 * SHA256SUMS for a release folder: one line per file, {@code <hex>  <name>}, sorted by name, in the form
 * {@code sha256sum -c SHA256SUMS} checks (docs/install.md#checking-a-download). Every regular file of the folder but
 * SHA256SUMS itself.
 *
 * <p>Usage: {@code Checksums FOLDER}
 */
public final class Checksums {

    public static final String FILE = "SHA256SUMS";

    private Checksums() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 1) {
            throw new IllegalArgumentException("usage: Checksums FOLDER");
        }
        write(Path.of(args[0]));
    }

    static void write(Path folder) throws IOException {
        StringBuilder out = new StringBuilder();
        for (Path file : files(folder)) {
            out.append(sha256(file)).append("  ").append(file.getFileName()).append('\n');
        }
        Files.writeString(folder.resolve(FILE), out.toString(), StandardCharsets.UTF_8);
    }

    static List<Path> files(Path folder) throws IOException {
        try (Stream<Path> s = Files.list(folder)) {
            return s.filter(Files::isRegularFile).filter(p -> !p.getFileName().toString().equals(FILE)).sorted().toList();
        }
    }

    public static String sha256(Path file) throws IOException {
        MessageDigest digest;
        try {
            digest = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        byte[] buffer = new byte[1 << 16];
        try (InputStream in = Files.newInputStream(file)) {
            for (int n; (n = in.read(buffer)) > 0; ) {
                digest.update(buffer, 0, n);
            }
        }
        return HexFormat.of().formatHex(digest.digest());
    }
}
