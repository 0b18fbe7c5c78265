package io.queen.timers.sweeper;

import io.queen.timers.log.codec.TxnHash;
import java.util.HexFormat;

/**
 * A destination that refuses particular messages, installed in ONE test database only: a trigger on
 * queen.log_txns raises check_violation (SQLSTATE 23514, a permanent error) when a pushed segment carries
 * the txn hash of a poisoned timer. It is what a real permanent refusal looks like to the sweeper: the
 * push statement fails inside the fire transaction, for that data, every time. Segments without a
 * poisoned txn go through untouched. The hashes are compared 16-byte aligned, the way log_txns stores them.
 */
public final class Poison {

    private final Staging staging;

    public Poison(Staging staging) {
        this.staging = staging;
    }

    public Poison install() {
        staging.execute("CREATE TABLE IF NOT EXISTS public.test_poison (hash bytea PRIMARY KEY)");
        staging.execute("""
                CREATE OR REPLACE FUNCTION public.test_refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    IF EXISTS (SELECT 1
                                 FROM public.test_poison p, generate_series(0, octet_length(NEW.hashes) / 16 - 1) AS i
                                WHERE substring(NEW.hashes FROM i * 16 + 1 FOR 16) = p.hash) THEN
                        RAISE EXCEPTION 'this test destination refuses a poisoned message' USING ERRCODE = '23514';
                    END IF;
                    RETURN NEW;
                END $$""");
        staging.execute("DROP TRIGGER IF EXISTS test_refuse_poison ON queen.log_txns");
        staging.execute("CREATE TRIGGER test_refuse_poison BEFORE INSERT ON queen.log_txns"
                + " FOR EACH ROW EXECUTE FUNCTION public.test_refuse_poison()");
        return this;
    }

    public void poison(String txn) {
        staging.execute("INSERT INTO public.test_poison VALUES ('\\x" + HexFormat.of().formatHex(TxnHash.of(txn)) + "') ON CONFLICT DO NOTHING");
    }

    public void cure(String txn) {
        staging.execute("DELETE FROM public.test_poison WHERE hash = '\\x" + HexFormat.of().formatHex(TxnHash.of(txn)) + "'");
    }

    public void cureAll() {
        staging.execute("DELETE FROM public.test_poison");
    }
}
