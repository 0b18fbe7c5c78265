package io.queen.timers.core.db;

import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.ConfigException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/**
 * The start check of least privilege in the database (docs/schema-and-roles.md#database-roles): a service
 * refuses to start connected as a role that could change the database other than through its functions.
 * Enforced, not advised: the roles and grants exist after every migrate (sql module, db/least-privilege.sql),
 * and this check makes a deployment that still runs a service as the owner or a superuser fail at once,
 * naming the fix, instead of running with the power to rewrite {@code queen.bridge_offsets} or empty the
 * outbox. {@link CommonSettings#DB_ROLE_CHECK} = false turns it off, for a single-role development database.
 *
 * <p>Refused: a superuser; a role that may create in the database or in schema {@code queen}, or is a member
 * of the role owning {@code queen} (it could {@code SET ROLE} to it); a role holding INSERT, UPDATE, DELETE or
 * TRUNCATE on any table of {@code queen} or {@code queen_timers}; a role with CREATEROLE (it can grant itself
 * other roles, or make logins that have them); a role that is also a member of another
 * service's group role, or of the operator's (it could call that role's functions: a bridge login that is in
 * queen_operator rewrites offsets); a role that is not a member of the service's group role (its calls would
 * fail with 42501, one by one, at run time). PRICE: one catalog read at start.
 */
public final class DatabaseRole {

    /** The group role of the bridge (db/least-privilege.sql). */
    public static final String BRIDGE = "queen_bridge";
    /** The group role of the sweeper. */
    public static final String SWEEPER = "queen_sweeper";
    /** The group role of the CLI's reads and `offsets set`. */
    public static final String OPERATOR = "queen_operator";

    private static final String CHECK = """
            SELECT current_user AS role, r.rolsuper AS superuser,
                   has_database_privilege(current_database(), 'CREATE') AS creates_in_database,
                   coalesce(has_schema_privilege(n.oid, 'CREATE'), false) AS creates_in_schema,
                   coalesce(pg_has_role(n.nspowner, 'MEMBER'), false) AS owns_schema,
                   (SELECT string_agg(c.relnamespace::regnamespace || '.' || c.relname, ', ' ORDER BY c.relname)
                      FROM pg_class c
                     WHERE c.relnamespace IN (SELECT oid FROM pg_namespace WHERE nspname IN ('queen', 'queen_timers'))
                       AND c.relkind IN ('r', 'p')
                       AND has_table_privilege(c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE')) AS writable_tables,
                   CASE WHEN EXISTS (SELECT 1 FROM pg_roles g WHERE g.rolname = ?) THEN pg_has_role(?, 'USAGE') ELSE false END AS in_group,
                   r.rolcreaterole AS creates_roles,
                   (SELECT string_agg(g.rolname, ', ' ORDER BY g.rolname)
                      FROM pg_roles g
                     WHERE g.rolname IN ('queen_bridge', 'queen_sweeper', 'queen_operator') AND g.rolname <> ?
                       AND pg_has_role(g.oid, 'MEMBER')) AS other_groups
              FROM pg_roles r
              LEFT JOIN pg_namespace n ON n.nspname = 'queen'
             WHERE r.rolname = current_user
            """;

    private DatabaseRole() {}

    /**
     * Throws {@link ConfigException} naming the fix when the role of {@code dataSource}'s connections is not a
     * least-privilege member of {@code group}; {@link SQLException} when the database cannot be read.
     */
    public static void requireLeastPrivilege(DataSource dataSource, String service, String group) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement st = c.prepareStatement(CHECK)) {
            st.setString(1, group);
            st.setString(2, group);
            st.setString(3, group);
            try (ResultSet rs = st.executeQuery()) {
                rs.next();
                String role = rs.getString("role");
                List<String> can = new ArrayList<>();
                if (rs.getBoolean("superuser")) {
                    can.add("it is a superuser");
                }
                if (rs.getBoolean("creates_in_database")) {
                    can.add("it may CREATE in the database");
                }
                if (rs.getBoolean("creates_in_schema")) {
                    can.add("it may CREATE in schema queen");
                }
                if (rs.getBoolean("owns_schema")) {
                    can.add("it is (a member of) the owner of schema queen");
                }
                if (rs.getBoolean("creates_roles")) {
                    can.add("it has CREATEROLE (it may grant itself, or a login it creates, any other role)");
                }
                String others = rs.getString("other_groups");
                if (others != null) {
                    can.add("it is also a member of " + others + " (it may call that role's functions)");
                }
                String writable = rs.getString("writable_tables");
                if (writable != null) {
                    can.add("it may INSERT, UPDATE, DELETE or TRUNCATE " + shortList(writable));
                }
                if (!can.isEmpty()) {
                    if (!rs.getBoolean("in_group")) {
                        can.add("it is not a member of " + group);
                    }
                    throw new ConfigException(service + " refuses to connect to the database as role " + role + ": "
                            + String.join("; ", can) + ". Run it as a login role that is a member of " + group
                            + " and nothing more (it can only EXECUTE the " + service + "'s functions; docs/schema-and-roles.md#database-roles),"
                            + " or set " + CommonSettings.DB_ROLE_CHECK + "=false (QUEEN_DB_ROLE_CHECK) for a single-role development database.");
                }
                if (!rs.getBoolean("in_group")) {
                    throw new ConfigException(service + " refuses to connect to the database as role " + role + ": it is not a member of "
                            + group + ", so every call of the " + service + "'s functions would be refused (42501). GRANT " + group + " TO "
                            + role + " (docs/schema-and-roles.md#database-roles), or set " + CommonSettings.DB_ROLE_CHECK + "=false for a single-role development database.");
                }
            }
        }
    }

    private static String shortList(String names) {
        String[] all = names.split(", ");
        return all.length <= 4 ? names : String.join(", ", List.of(all).subList(0, 4)) + " and " + (all.length - 4) + " more";
    }
}
