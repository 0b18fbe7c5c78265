#!/usr/bin/python3
"""queen-timers from Python (confluent-kafka): schedule a timer, cancel another, await the verdicts.

Sends JSON-envelope commands to the command topic (docs/commands.md) and reads the audit topic
(docs/formats.md#audit-events-on-the-topic) until both timers have their verdict:
  <run>-fires   schedule in 2 s               -> scheduled, then fired (same messageId)
  <run>-cancel  schedule in 3 s, then cancel  -> scheduled, cancelled, and no fired past its time
Every command is validated against schemas/command-envelope.schema.json before it is sent, and every
event read from the audit topic (ours or not) against schemas/audit-event.schema.json. Exits 0 when
all of that held, 1 otherwise (a schema violation, an unexpected event, or no verdict in time).

Needs confluent-kafka and jsonschema (Debian: apt-get install python3-confluent-kafka python3-jsonschema).
"""
import argparse
import json
import os
import secrets
import sys
import time
from datetime import datetime

import jsonschema
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

HERE = os.path.dirname(os.path.abspath(__file__))


class Failed(Exception):
    pass


def say(text):
    print(text, flush=True)


def load_validator(schemas, name):
    with open(os.path.join(schemas, name), encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())


def check(validator, doc, what):
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    if errors:
        detail = "; ".join(f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in errors[:5])
        raise Failed(f"{what} does not match its schema: {detail}\n  {json.dumps(doc)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bootstrap", default=os.environ.get("QUEEN_BOOTSTRAP", "127.0.0.1:9092"))
    ap.add_argument("--commands-topic", default="queen.timers.commands")
    ap.add_argument("--audit-topic", default="queen.timers.audit")
    ap.add_argument("--queue", default="examples.python")
    ap.add_argument("--schemas", default=os.path.join(HERE, "..", "..", "schemas"))
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for every verdict")
    args = ap.parse_args()
    try:
        run(args)
    except (Failed, KafkaException) as e:
        say(f"FAILED: {e}")
        return 1
    say("OK: every command and event matched the schemas, and both timers got the expected verdicts")
    return 0


def run(args):
    command_schema = load_validator(args.schemas, "command-envelope.schema.json")
    event_schema = load_validator(args.schemas, "audit-event.schema.json")
    run_id = f"py-{time.strftime('%H%M%S')}-{secrets.token_hex(3)}"
    fires, cancelled = f"{run_id}-fires", f"{run_id}-cancel"
    queue = args.queue
    # A W3C traceparent (optional): the verdicts carry its trace id back (docs/tracing.md#trace-context).
    trace_id, span_id = secrets.token_hex(16), secrets.token_hex(8)

    # Read the audit topic from its current end, noted before anything is sent: no verdict is missed,
    # and no history is read. No group coordination (assign, not subscribe), nothing committed.
    consumer = Consumer({"bootstrap.servers": args.bootstrap, "group.id": f"queen-example-{run_id}",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    meta = consumer.list_topics(args.audit_topic, timeout=10)
    topic_meta = meta.topics.get(args.audit_topic)
    if topic_meta is None or topic_meta.error is not None or not topic_meta.partitions:
        raise Failed(f"audit topic {args.audit_topic} not found at {args.bootstrap}")
    start = []
    for p in sorted(topic_meta.partitions):
        _, high = consumer.get_watermark_offsets(TopicPartition(args.audit_topic, p), timeout=10)
        start.append(TopicPartition(args.audit_topic, p, high))
    consumer.assign(start)

    # The Java client's partitioner (murmur2), so a timer's commands land on the partition a Java
    # producer would pick for the same key: every command of one timer on one partition, in order.
    producer = Producer({"bootstrap.servers": args.bootstrap, "acks": "all", "enable.idempotence": True,
                         "partitioner": "murmur2_random"})
    delivery_errors = []

    def send(command):
        check(command_schema, command, f"command {command['op']} {command['timerKey']}")
        # The key rule: exactly <queue>/<timerKey>, so one timer's commands keep their order.
        key = f"{command['queue']}/{command['timerKey']}".encode("utf-8")
        producer.produce(args.commands_topic, key=key, value=json.dumps(command).encode("utf-8"),
                         headers=[("traceparent", f"00-{trace_id}-{span_id}-01")],
                         on_delivery=lambda err, msg: err and delivery_errors.append(err))
        say(f"sent      {command['op']:<10} {queue}/{command['timerKey']}  {json.dumps(command)}")

    send({"op": "schedule", "queue": queue, "timerKey": fires, "delayMs": 2000, "txn": fires,
          "payload": {"example": "python", "note": "fires in 2 s"}})
    send({"op": "schedule", "queue": queue, "timerKey": cancelled, "delayMs": 3000, "txn": cancelled,
          "payload": {"example": "python", "note": "never fires"}})
    send({"op": "cancel", "queue": queue, "timerKey": cancelled})
    if producer.flush(10) != 0 or delivery_errors:
        raise Failed(f"commands not acknowledged by the broker: {delivery_errors or 'flush timed out'}")

    seen = {fires: [], cancelled: []}  # the events of our keys, in order
    ids = set()
    deadline = time.monotonic() + args.timeout
    quiet_until = None  # once cancelled: watch a while past its deliverAt for a fire that must not come
    try:
        while True:
            now = time.monotonic()
            if quiet_until is not None and now >= quiet_until:
                break
            if now >= deadline:
                raise Failed(f"no complete verdict within {args.timeout:.0f} s; events seen: "
                             + json.dumps({k: [e['type'] for e in v] for k, v in seen.items()}))
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            if msg.error():
                raise KafkaException(msg.error())
            event = json.loads(msg.value())
            check(event_schema, event, f"audit event at {msg.topic()}[{msg.partition()}]@{msg.offset()}")
            headers = dict(msg.headers() or [])
            if headers.get("queen-event-id", b"").decode() != event["eventId"]:
                raise Failed(f"header queen-event-id {headers.get('queen-event-id')!r} is not eventId {event['eventId']}")
            record_key = msg.key().decode("utf-8") if msg.key() is not None else None
            if not record_key or not record_key.startswith(queue + "/"):
                continue  # someone else's timer
            timer_key = record_key[len(queue) + 1:]
            if timer_key not in seen:
                continue
            if event["eventId"] in ids:
                continue  # at-least-once: deduplicate on eventId
            ids.add(event["eventId"])
            if event.get("queue", queue) != queue or event.get("timerKey", timer_key) != timer_key:
                raise Failed(f"record key {record_key} does not name the event's timer: {json.dumps(event)}")
            say(f"event     {event['type']:<10} {record_key}  {json.dumps(event)}")
            seen[timer_key].append(event)
            if event.get("traceId", trace_id) != trace_id:
                raise Failed(f"event carries trace {event.get('traceId')}, the command was sent with {trace_id}")
            types = [e["type"] for e in seen[timer_key]]
            expected = ["scheduled", "fired"] if timer_key == fires else ["scheduled", "cancelled"]
            if types != expected[:len(types)]:
                raise Failed(f"{record_key}: events {types}, expected {expected}")
            if timer_key == fires and types == expected and event["messageId"] != seen[fires][0]["messageId"]:
                raise Failed(f"{record_key} fired message {event['messageId']}, scheduled {seen[fires][0]['messageId']}")
            if all(len(seen[k]) == 2 for k in seen) and quiet_until is None:
                # Keep reading until 2 s past the cancelled timer's deliverAt: it must not fire.
                due = datetime.fromisoformat(seen[cancelled][0]["deliverAt"]).timestamp()
                quiet_until = time.monotonic() + max(0.0, due - time.time()) + 2.0
        f = seen[fires][1]
        say(f"verdict   {queue}/{fires}: fired message {f['messageId']} at log offset {f['offset']}, {f['lateMs']} ms late")
        say(f"verdict   {queue}/{cancelled}: cancelled, and did not fire")
    finally:
        consumer.close()


if __name__ == "__main__":
    sys.exit(main())
