package io.queen.timers.testkit;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Collection;

/**
 * The destination that refuses poisoned messages: a trigger on {@code queen.log_txns} raises
 * check_violation (23514, permanent) when a pushed segment carries the txn hash of a registered
 * poisoned txn, so that fire fails inside its transaction, for that data, every time — what a real
 * permanent refusal looks like to the sweeper. Installed in a test's or a rig's own database only, after the
 * schema exists (the fault harness's and the soak's; the sweeper's and the end-to-end tests', through their
 * {@code sweeper.Poison}). Hashes are compared 16-byte aligned, as log_txns stores them. The caller hashes each txn with
 * the log's own {@code TxnHash}: the test kit sits below the log module, so it takes the hashes, not the txns.
 */
public final class Poison {

    private static final String INSERT = "INSERT INTO public.faults_poison VALUES (?) ON CONFLICT DO NOTHING";
    private static final String DELETE = "DELETE FROM public.faults_poison WHERE hash = ?";

    private Poison() {
    }

    public static void install(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS public.faults_poison (hash bytea PRIMARY KEY)");
            s.execute("""
                    CREATE OR REPLACE FUNCTION public.faults_refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
                    BEGIN
                        IF EXISTS (SELECT 1
                                     FROM public.faults_poison p, generate_series(0, octet_length(NEW.hashes) / 16 - 1) AS i
                                    WHERE substring(NEW.hashes FROM i * 16 + 1 FOR 16) = p.hash) THEN
                            RAISE EXCEPTION 'fault harness: this destination refuses a poisoned message' USING ERRCODE = '23514';
                        END IF;
                        RETURN NEW;
                    END $$""");
            s.execute("DROP TRIGGER IF EXISTS faults_refuse_poison ON queen.log_txns");
            s.execute("CREATE TRIGGER faults_refuse_poison BEFORE INSERT ON queen.log_txns FOR EACH ROW EXECUTE FUNCTION public.faults_refuse_poison()");
        }
    }

    /** Registers poisoned txns by their hashes: a segment carrying one of them is refused from now on. */
    public static void register(Connection c, Collection<byte[]> txnHashes) throws SQLException {
        byHash(c, INSERT, txnHashes);
    }

    /** Cures poisoned txns by their hashes: a segment carrying one of them goes through again. */
    public static void cure(Connection c, Collection<byte[]> txnHashes) throws SQLException {
        byHash(c, DELETE, txnHashes);
    }

    /** Runs {@code sql} once per hash, the hash its one parameter, in one batch. */
    private static void byHash(Connection c, String sql, Collection<byte[]> txnHashes) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            for (byte[] hash : txnHashes) {
                ps.setBytes(1, hash);
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }

    /** Cures every poisoned txn. */
    public static void cureAll(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("DELETE FROM public.faults_poison");
        }
    }
}
