package io.queen.timers.release;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** ReleaseNotes cuts one version's section out of a Keep a Changelog file. */
class ReleaseNotesTest {

    static final List<String> CHANGELOG = List.of(
            "# Changelog", "", "Intro.", "",
            "## [Unreleased]", "", "### Added", "- next thing", "",
            "## [0.2.0] - 2027-01-10", "", "### Fixed", "- a bug", "",
            "## [0.1.0] - 2026-12-05", "", "### Added", "- first thing", "",
            "[Unreleased]: https://example.invalid/compare");

    @Test
    void aReleaseGetsItsOwnSectionAndNothingOfTheNext() {
        String notes = ReleaseNotes.notes(CHANGELOG, "0.2.0");
        assertThat(notes).isEqualTo("# queen-timers 0.2.0\n\n### Fixed\n- a bug\n");
        assertThat(ReleaseNotes.notes(CHANGELOG, "0.1.0")).contains("- first thing").doesNotContain("a bug")
                .doesNotContain("example.invalid").doesNotContain("Intro");
    }

    @Test
    void aSnapshotGetsTheUnreleasedSection() {
        assertThat(ReleaseNotes.notes(CHANGELOG, "0.3.0-SNAPSHOT"))
                .startsWith("# queen-timers 0.3.0-SNAPSHOT (unreleased")
                .contains("- next thing").doesNotContain("a bug");
    }

    @Test
    void aVersionWithoutASectionIsNotReleased() {
        assertThatThrownBy(() -> ReleaseNotes.notes(CHANGELOG, "0.1.1")).hasMessageContaining("## [0.1.1]");
        // a prefix is not a match: [0.1.0] is not the section of 0.1
        assertThatThrownBy(() -> ReleaseNotes.notes(CHANGELOG, "0.1")).hasMessageContaining("## [0.1]");
    }

    @Test
    void theRepositorysChangelogHasTheSectionThisBuildsVersionNeeds() throws Exception {
        String version = System.getProperty("project.version");
        String notes = ReleaseNotes.notes(Files.readAllLines(Path.of("../CHANGELOG.md")), version);
        assertThat(notes).startsWith("# queen-timers " + version).contains("### Added");
    }
}
