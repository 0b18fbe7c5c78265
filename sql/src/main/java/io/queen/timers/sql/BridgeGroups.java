package io.queen.timers.sql;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * The schema owner's binding of a bridge group (docs/schema-and-roles.md#database-roles): the login the group runs
 * as, and the tenant each of its command topics stands for. A least-privilege bridge login can change no group it is
 * not bound to, and registers no topic the owner did not bind (db/current/R__bridge_groups.sql): `queen-timers migrate`
 * binds the group its environment declares, the local stack and the tests bind theirs through this class.
 */
public final class BridgeGroups {

    private static final String BIND = SqlFile.load(BridgeGroups.class, "bridge-group-bind.sql");

    private BridgeGroups() {}

    /** A row of queen.bridge_group_bind_v1: one command topic and its tenant. */
    private record TopicRow(String topic, UUID tenantId) {}

    /**
     * Binds {@code group} to {@code login} and its command topics to exactly {@code tenants} (topic → tenant; a topic
     * bound before and not named now is unbound). Run as the owner of the queen schema: no service role may call it.
     * Refused (22023) when another group binds one of the topics to another tenant.
     */
    public static void bind(DataSource ownerDataSource, String group, String login, Map<String, UUID> tenants) throws SQLException {
        List<TopicRow> rows = new ArrayList<>();
        new TreeMap<>(tenants).forEach((topic, tenant) -> rows.add(new TopicRow(topic, tenant)));
        try (Connection c = ownerDataSource.getConnection(); PreparedStatement st = c.prepareStatement(BIND)) {
            st.setString(1, group);
            st.setString(2, login);
            st.setString(3, JsonRows.write(rows));
            st.executeQuery().close();
        }
    }
}
