package io.queen.timers.release;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The release notes of one version, cut from CHANGELOG.md (Keep a Changelog form): the body of its {@code ## [X.Y.Z]}
 * section, or of {@code ## [Unreleased]} for a SNAPSHOT (what the next release will hold). A release whose version has
 * no section fails: a version is not released without saying what changed.
 *
 * <p>Usage: {@code ReleaseNotes CHANGELOG.md VERSION OUT.md}
 */
public final class ReleaseNotes {

    private static final Pattern LINK_DEFINITION = Pattern.compile("^\\[[^\\]]+\\]:\\s.*");

    private ReleaseNotes() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 3) {
            throw new IllegalArgumentException("usage: ReleaseNotes CHANGELOG.md VERSION OUT.md");
        }
        String notes = notes(Files.readAllLines(Path.of(args[0]), StandardCharsets.UTF_8), args[1]);
        Path out = Path.of(args[2]);
        Files.createDirectories(out.toAbsolutePath().getParent());
        Files.writeString(out, notes, StandardCharsets.UTF_8);
    }

    /** The section's heading, to read in CHANGELOG.md: the version, or Unreleased for a SNAPSHOT. */
    static String sectionFor(String version) {
        return version.endsWith("-SNAPSHOT") ? "Unreleased" : version;
    }

    /** "# queen-timers VERSION", then the section's lines up to the next version's heading, trimmed. */
    static String notes(List<String> changelog, String version) {
        String section = sectionFor(version);
        StringBuilder body = new StringBuilder();
        boolean in = false;
        boolean found = false;
        for (String line : changelog) {
            if (line.startsWith("## ")) {
                if (in) {
                    break;
                }
                // "## [0.1.0] - 2026-12-05" or "## [Unreleased]"
                in = line.startsWith("## [" + section + "]");
                found |= in;
                continue;
            }
            // the file's link reference definitions ("[Unreleased]: https://..."): the footer, no section's text
            if (in && !LINK_DEFINITION.matcher(line).matches()) {
                body.append(line).append('\n');
            }
        }
        if (!found) {
            throw new IllegalStateException("CHANGELOG.md has no section ## [" + section + "] for version " + version);
        }
        String text = body.toString().strip();
        if (text.isEmpty()) {
            throw new IllegalStateException("CHANGELOG.md's section [" + section + "] is empty");
        }
        String title = "# queen-timers " + version + (section.equals("Unreleased") ? " (unreleased: changes since the last release)" : "");
        return title + "\n\n" + text + "\n";
    }
}
