#!/usr/bin/env node
// queen-timers from Node (kafkajs): schedule a timer, cancel another, await the verdicts.
//
// Sends JSON-envelope commands to the command topic (docs/commands.md) and reads the audit topic
// (docs/formats.md#audit-events-on-the-topic) until both timers have their verdict:
//   <run>-fires   schedule in 2 s               -> scheduled, then fired (same messageId)
//   <run>-cancel  schedule in 3 s, then cancel  -> scheduled, cancelled, and no fired past its time
// Every command is validated against schemas/command-envelope.schema.json before it is sent, and every
// event read from the audit topic (ours or not) against schemas/audit-event.schema.json (ajv, draft
// 2020-12). Exits 0 when all of that held, 1 otherwise (a schema violation, an unexpected event, or no
// verdict in time).
//
//   npm ci && node timers-example.js --bootstrap 127.0.0.1:9092
'use strict';

const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { parseArgs } = require('node:util');
const Ajv2020 = require('ajv/dist/2020');
const addFormats = require('ajv-formats');
const fzstd = require('fzstd');
const { CompressionCodecs, CompressionTypes, Kafka, Partitioners, logLevel } = require('kafkajs');

// The audit relay compresses its batches with zstd (audit.relay.compression, default zstd), which
// kafkajs cannot read without a codec: fzstd (pure JavaScript, decompression only) is enough to
// consume; this example sends its commands uncompressed.
CompressionCodecs[CompressionTypes.ZSTD] = () => ({
  async compress() { throw new Error('zstd compression is not used here'); },
  async decompress(buffer) { return Buffer.from(fzstd.decompress(buffer)); },
});

class Failed extends Error {}

const say = (text) => console.log(text);

function loadValidator(ajv, schemas, name) {
  return ajv.compile(JSON.parse(fs.readFileSync(path.join(schemas, name), 'utf8')));
}

function check(validate, doc, what) {
  if (!validate(doc)) {
    const detail = validate.errors.slice(0, 5).map((e) => `${e.instancePath || '(root)'}: ${e.message}`).join('; ');
    throw new Failed(`${what} does not match its schema: ${detail}\n  ${JSON.stringify(doc)}`);
  }
}

async function run(opts) {
  // strictTypes off: the schemas put maxLength next to a $ref to a string type, which is valid JSON
  // Schema that ajv's strict mode only warns about.
  const ajv = new Ajv2020({ allErrors: true, strictTypes: false });
  addFormats(ajv);
  const commandSchema = loadValidator(ajv, opts.schemas, 'command-envelope.schema.json');
  const eventSchema = loadValidator(ajv, opts.schemas, 'audit-event.schema.json');
  const runId = `js-${new Date().toISOString().slice(11, 19).replaceAll(':', '')}-${crypto.randomBytes(3).toString('hex')}`;
  const fires = `${runId}-fires`;
  const cancelled = `${runId}-cancel`;
  const queue = opts.queue;
  // A W3C traceparent (optional): the verdicts carry its trace id back (docs/tracing.md#trace-context).
  const traceId = crypto.randomBytes(16).toString('hex');
  const spanId = crypto.randomBytes(8).toString('hex');

  const kafka = new Kafka({
    clientId: `queen-example-${runId}`, brokers: opts.bootstrap.split(','), logLevel: logLevel.ERROR,
    connectionTimeout: 5000, retry: { retries: 3 },
  });
  const groupId = `queen-example-${runId}`;
  const admin = kafka.admin();
  // The Java client's partitioner (murmur2), so a timer's commands land on the partition a Java
  // producer would pick for the same key: every command of one timer on one partition, in order.
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 500 });
  const seen = { [fires]: [], [cancelled]: [] }; // the events of our keys, in order
  const ids = new Set();
  let failure = null;
  let resolveDone;
  const done = new Promise((resolve) => { resolveDone = resolve; });
  const fail = (e) => { failure = failure || e; resolveDone(); };

  try {
    await admin.connect();
    // Read the audit topic from its current end, noted before anything is sent: no verdict is missed,
    // and no history is read (the consumer seeks there once it has joined, before the commands go).
    const ends = await admin.fetchTopicOffsets(opts.auditTopic);
    await consumer.connect();
    await consumer.subscribe({ topics: [opts.auditTopic] });
    const joined = new Promise((resolve) => consumer.on(consumer.events.GROUP_JOIN, resolve));
    consumer.on(consumer.events.CRASH, ({ payload }) => fail(new Failed(`the audit consumer crashed: ${payload.error}`)));
    let quietTimer = null;
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ topic, partition, message }) => {
        if (failure) return;
        try {
          const event = JSON.parse(message.value.toString('utf8'));
          check(eventSchema, event, `audit event at ${topic}[${partition}]@${message.offset}`);
          const header = message.headers['queen-event-id'];
          if (!header || header.toString('utf8') !== event.eventId) {
            throw new Failed(`header queen-event-id ${header} is not eventId ${event.eventId}`);
          }
          const recordKey = message.key ? message.key.toString('utf8') : null;
          if (!recordKey || !recordKey.startsWith(`${queue}/`)) return; // someone else's timer
          const timerKey = recordKey.slice(queue.length + 1);
          if (!(timerKey in seen)) return;
          if (ids.has(event.eventId)) return; // at-least-once: deduplicate on eventId
          ids.add(event.eventId);
          if ((event.queue ?? queue) !== queue || (event.timerKey ?? timerKey) !== timerKey) {
            throw new Failed(`record key ${recordKey} does not name the event's timer: ${JSON.stringify(event)}`);
          }
          say(`event     ${event.type.padEnd(10)} ${recordKey}  ${JSON.stringify(event)}`);
          seen[timerKey].push(event);
          if ((event.traceId ?? traceId) !== traceId) {
            throw new Failed(`event carries trace ${event.traceId}, the command was sent with ${traceId}`);
          }
          const types = seen[timerKey].map((e) => e.type);
          const expected = timerKey === fires ? ['scheduled', 'fired'] : ['scheduled', 'cancelled'];
          if (types.some((t, i) => t !== expected[i])) {
            throw new Failed(`${recordKey}: events ${JSON.stringify(types)}, expected ${JSON.stringify(expected)}`);
          }
          if (timerKey === fires && types.length === 2 && event.messageId !== seen[fires][0].messageId) {
            throw new Failed(`${recordKey} fired message ${event.messageId}, scheduled ${seen[fires][0].messageId}`);
          }
          if (quietTimer === null && Object.values(seen).every((v) => v.length === 2)) {
            // Keep reading until 2 s past the cancelled timer's deliverAt: it must not fire.
            const due = Date.parse(seen[cancelled][0].deliverAt);
            quietTimer = setTimeout(resolveDone, Math.max(0, due - Date.now()) + 2000);
          }
        } catch (e) {
          fail(e);
        }
      },
    });
    let joinTimer;
    await Promise.race([joined, new Promise((_, reject) => {
      joinTimer = setTimeout(() => reject(new Failed('the audit consumer did not join its group in 15 s')), 15000);
    })]).finally(() => clearTimeout(joinTimer));
    for (const p of ends) consumer.seek({ topic: opts.auditTopic, partition: p.partition, offset: p.high });

    await producer.connect();
    const commands = [
      { op: 'schedule', queue, timerKey: fires, delayMs: 2000, txn: fires, payload: { example: 'node', note: 'fires in 2 s' } },
      { op: 'schedule', queue, timerKey: cancelled, delayMs: 3000, txn: cancelled, payload: { example: 'node', note: 'never fires' } },
      { op: 'cancel', queue, timerKey: cancelled },
    ];
    for (const c of commands) check(commandSchema, c, `command ${c.op} ${c.timerKey}`);
    // The key rule: exactly <queue>/<timerKey>, so one timer's commands keep their order.
    await producer.send({
      topic: opts.commandsTopic,
      acks: -1,
      messages: commands.map((c) => ({
        key: `${c.queue}/${c.timerKey}`, value: JSON.stringify(c), headers: { traceparent: `00-${traceId}-${spanId}-01` },
      })),
    });
    for (const c of commands) say(`sent      ${c.op.padEnd(10)} ${c.queue}/${c.timerKey}  ${JSON.stringify(c)}`);

    const timeout = setTimeout(() => fail(new Failed(`no complete verdict within ${opts.timeout} s; events seen: `
      + JSON.stringify(Object.fromEntries(Object.entries(seen).map(([k, v]) => [k, v.map((e) => e.type)]))))), opts.timeout * 1000);
    await done;
    clearTimeout(timeout);
    clearTimeout(quietTimer);
    if (failure) throw failure;
    const f = seen[fires][1];
    say(`verdict   ${queue}/${fires}: fired message ${f.messageId} at log offset ${f.offset}, ${f.lateMs} ms late`);
    say(`verdict   ${queue}/${cancelled}: cancelled, and did not fire`);
  } finally {
    await Promise.allSettled([consumer.disconnect(), producer.disconnect(), admin.disconnect()]);
  }
}

async function main() {
  const { values } = parseArgs({
    options: {
      bootstrap: { type: 'string', default: process.env.QUEEN_BOOTSTRAP || '127.0.0.1:9092' },
      'commands-topic': { type: 'string', default: 'queen.timers.commands' },
      'audit-topic': { type: 'string', default: 'queen.timers.audit' },
      queue: { type: 'string', default: 'examples.node' },
      schemas: { type: 'string', default: path.join(__dirname, '..', '..', 'schemas') },
      timeout: { type: 'string', default: '30' },
    },
  });
  const opts = {
    bootstrap: values.bootstrap, commandsTopic: values['commands-topic'], auditTopic: values['audit-topic'],
    queue: values.queue, schemas: values.schemas, timeout: Number(values.timeout),
  };
  try {
    await run(opts);
  } catch (e) {
    say(`FAILED: ${e instanceof Failed ? e.message : `${e.name}: ${e.message}`}`);
    return 1;
  }
  say('OK: every command and event matched the schemas, and both timers got the expected verdicts');
  return 0;
}

main().then((code) => { process.exitCode = code; });
