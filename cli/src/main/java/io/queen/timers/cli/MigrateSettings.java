package io.queen.timers.cli;

import static io.queen.timers.core.config.ConfigDef.Type.STRING;

import io.queen.timers.bridge.BridgeGroupSettings;
import io.queen.timers.core.config.Config;
import io.queen.timers.core.config.ConfigDef;

/**
 * What `queen-timers migrate` reads besides the database ({@link DatabaseOptions}): the bridge group it binds as the
 * schema owner (docs/schema-and-roles.md#database-roles).
 *
 * @param bridgeLogin {@link #BRIDGE_LOGIN}; empty: no group is bound
 * @param bridgeGroup the group and its topics' tenants, as the bridge reads them; null when {@code bridgeLogin} is empty
 */
record MigrateSettings(String bridgeLogin, BridgeGroupSettings bridgeGroup) {

    /** The login a bridge group runs as: declared to the owner's migrate, never chosen by the bridge. */
    static final String BRIDGE_LOGIN = "bridge.login";

    /** The database's keys, the bridge group's declaration, and {@link #BRIDGE_LOGIN}. */
    static ConfigDef definition() {
        return DatabaseOptions.definition()
                .include(BridgeGroupSettings.definition())
                .define(BRIDGE_LOGIN, STRING, "", null,
                        "The database login the bridge group (bridge.group.id) runs as: `migrate` binds the group to it, and its"
                                + " command topics to their tenants as the bridge reads them. Empty: no group is bound (a group"
                                + " nobody bound is refused to every least-privilege login).");
    }

    /** The declaration is read only when a login is given, and then refused in the bridge's words if the bridge would refuse it. */
    static MigrateSettings from(Config c) {
        String login = c.string(BRIDGE_LOGIN).trim();
        return new MigrateSettings(login, login.isEmpty() ? null : BridgeGroupSettings.from(c));
    }
}
