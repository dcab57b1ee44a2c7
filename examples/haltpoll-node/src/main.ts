// ts_haltpoll: the haltpoll cpuidle governor of KVM guests
// (drivers/cpuidle/governors/haltpoll.c: haltpoll_select(),
// haltpoll_reflect(), adjust_poll_limit()) as a tickemu governor plugin in
// TypeScript on Node, written from docs/plugins.md and docs/protocol.md. It
// polls (state 0, tick kept) while a guest_halt_poll_ns window is open, and
// halts (state 1, tick stopped) while it is closed; the window opens at
// guest_halt_poll_grow_start after a halt that ended within
// guest_halt_poll_ns, grows by guest_halt_poll_grow and shrinks by
// guest_halt_poll_shrink after a longer one. A zero PM QoS request polls.
// It serves the go-plugin handshake, the health and controller services,
// the catalog and the governor session (GovernorService) on the gRPC
// stream; it does not offer the optional session socket. The .proto files
// are loaded at run time from proto/ next to the compiled file
// (scripts/build-node-plugin.sh puts them there), with @grpc/proto-loader;
// int64 fields arrive as JS numbers, exact up to 2^53 ns (104 days).
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

const COOKIE_KEY = "TICKEMU_PLUGIN_MAGIC_COOKIE";
const COOKIE_VALUE = "7f3c1d0b-tickemu-timekeeping-plugin";
const APP_PROTOCOL = 5;
const NAME = "ts_haltpoll";

const info = {
  kind: "governor", name: NAME, version: "1.0.0",
  description: "haltpoll in TypeScript: poll within an adaptive guest_halt_poll_ns window, else halt with the tick stopped",
};
const schema = {
  attributes: [
    { name: "select_cost", type: "duration", default_value: "0ns", doc: "simulated cost of one ->select() on the idle CPU" },
    { name: "guest_halt_poll_ns", type: "number", default_value: "200000", doc: "the largest poll window in ns; 0 never polls" },
    { name: "guest_halt_poll_grow_start", type: "number", default_value: "50000", doc: "the window in ns a growing one starts from" },
    { name: "guest_halt_poll_grow", type: "number", default_value: "2", doc: "the window's growth factor" },
    { name: "guest_halt_poll_shrink", type: "number", default_value: "2", doc: "the window's shrink divisor (0: close it)" },
    {
      name: "guest_halt_poll_allow_shrink", type: "bool", default_value: "true", doc: "shrink the window after a long halt",
      unversioned: "a module parameter of the haltpoll governor, with the same default since the governor came (5.4)",
    },
  ],
};

interface State { exit_latency: number; target_residency: number }
interface Select { cpu: number; latency_req: number }
interface Reflect { cpu: number; state: number; residency: number }
interface Diagnostic { severity: string; attribute: string; summary: string }

// One plugin value: the state of one session.
class Haltpoll {
  cost = 0;
  pollNS = 0; growStart = 0; grow = 0; shrink = 0; allowShrink = true;
  states: (State[] | undefined)[] = [];
  pollLimit: number[] = []; // per CPU: dev->poll_limit_ns
  selects: number[] = [];
  retains: number[] = [];

  configure(req: { setup: { cpus: number }; config: { key: string; value: string }[] }) {
    const diagnostics: Diagnostic[] = [];
    const cpus = req.setup.cpus;
    if (cpus <= 0) {
      diagnostics.push({ severity: "SEVERITY_ERROR", attribute: "", summary: `machine has ${cpus} CPUs` });
    }
    const cfg = new Map(req.config.map((e) => [e.key, e.value]));
    // Canonical values (docs/protocol.md): durations are integer ns, numbers
    // Go's %g ("200000", "2e+06"), bools true/false.
    const num = (key: string) => {
      const v = Number(cfg.get(key));
      if (!Number.isSafeInteger(v) || v < 0) {
        diagnostics.push({ severity: "SEVERITY_ERROR", attribute: key, summary: `${key} ${cfg.get(key)} must be a whole number, not negative` });
        return 0;
      }
      return v;
    };
    this.cost = num("select_cost");
    this.pollNS = num("guest_halt_poll_ns");
    this.growStart = num("guest_halt_poll_grow_start");
    this.grow = num("guest_halt_poll_grow");
    this.shrink = num("guest_halt_poll_shrink");
    this.allowShrink = cfg.get("guest_halt_poll_allow_shrink") !== "false";
    const n = Math.max(cpus, 0);
    this.states = new Array(n).fill(undefined);
    this.pollLimit = new Array(n).fill(0);
    this.selects = new Array(n).fill(0);
    this.retains = new Array(n).fill(0);
    return { diagnostics };
  }

  // haltpoll_enable_device(): the window starts closed.
  enable(r: { cpu: number; states: State[] }) {
    if (r.cpu < 0 || r.cpu >= this.states.length || r.states.length === 0) {
      throw new Error(`Enable on cpu ${r.cpu} of ${this.states.length} with ${r.states.length} states`);
    }
    this.states[r.cpu] = r.states;
    this.pollLimit[r.cpu] = 0;
    return {};
  }

  cpuStates(cpu: number): State[] {
    const st = this.states[cpu];
    if (st === undefined) {
      throw new Error(`call on cpu ${cpu} before Enable`);
    }
    return st;
  }

  // haltpoll_select().
  select(r: Select) {
    const st = this.cpuStates(r.cpu);
    let state = 0;
    let stop = false;
    if (st.length >= 2 && r.latency_req !== 0 && st[1].exit_latency <= r.latency_req && this.pollLimit[r.cpu] === 0) {
      state = 1; // the window is closed: halt, the tick stopped
      stop = true;
    }
    this.selects[r.cpu]++;
    if (!stop) {
      this.retains[r.cpu]++;
    }
    return { state, stop_tick: stop, cost: this.cost };
  }

  // haltpoll_reflect() and adjust_poll_limit(), after a halt.
  reflect(r: Reflect) {
    this.cpuStates(r.cpu);
    if (r.state === 0) {
      return {};
    }
    const block = r.residency;
    const limit = this.pollLimit[r.cpu];
    if (block > limit && block <= this.pollNS) {
      this.pollLimit[r.cpu] = Math.min(Math.max(limit * this.grow, this.growStart), this.pollNS);
    } else if (block > this.pollNS && this.allowShrink) {
      this.pollLimit[r.cpu] = this.shrink === 0 ? 0 : Math.floor(limit / this.shrink);
    }
    return {};
  }

  counters() {
    const out = [];
    for (let cpu = 0; cpu < this.selects.length; cpu++) {
      out.push({ name: "selects", cpu, value: this.selects[cpu] }, { name: "tick_retained", cpu, value: this.retains[cpu] });
    }
    return out;
  }

  plugin(req: any): any {
    switch (req.call) {
      case "configure": return { configure: this.configure(req.configure) };
      case "info": return { info: { info } };
      case "schema": return { schema: { schema } };
      case "counters": return { counters: { counters: this.counters() } };
    }
    throw new Failure(grpc.status.UNIMPLEMENTED, `unknown plugin call ${req.call}`);
  }

  call(c: any): any {
    switch (c.call) {
      case "enable": return { enable: this.enable(c.enable) };
      case "select": return { select: this.select(c.select) };
      case "reflect": return { reflect: this.reflect(c.reflect) };
      case "plugin": return { plugin: this.plugin(c.plugin) };
    }
    throw new Failure(grpc.status.INVALID_ARGUMENT, `${c.call} call to a governor plugin`);
  }
}

// Failure ends a session with a gRPC status.
class Failure extends Error {
  constructor(readonly code: grpc.status, message: string) { super(message); }
}

function fail(stream: grpc.ServerDuplexStream<any, any>, e: unknown) {
  const f = e instanceof Failure ? e : new Failure(grpc.status.INTERNAL, `${NAME}: ${e instanceof Error ? e.message : String(e)}`);
  stream.destroy(Object.assign(new Error(f.message), { code: f.code, details: f.message }));
}

// GovernorSession: open, then one answer per message, one result per call,
// in order (reflect calls arrive batched in front of the next select).
function session(stream: grpc.ServerDuplexStream<any, any>) {
  let p: Haltpoll | undefined;
  stream.on("data", (req: { calls: any[] }) => {
    try {
      if (p === undefined) {
        const c = req.calls.length === 1 ? req.calls[0] : undefined;
        if (c?.call !== "plugin" || c.plugin.call !== "open") {
          throw new Failure(grpc.status.INVALID_ARGUMENT, "session must start with an OpenRequest");
        }
        if (c.plugin.open.name !== NAME) {
          throw new Failure(grpc.status.NOT_FOUND, `no governor plugin "${c.plugin.open.name}" here (serving [${NAME}])`);
        }
        p = new Haltpoll();
        stream.write({ results: [{ plugin: { open: { info, socket_path: "" } } }] });
        return;
      }
      if (req.calls.length === 0) {
        throw new Failure(grpc.status.INVALID_ARGUMENT, "a session message must carry at least one call");
      }
      const results = req.calls.map((c) => p!.call(c));
      stream.write({ results });
    } catch (e) {
      fail(stream, e);
    }
  });
  stream.on("end", () => stream.end());
}

// raw serves a unary method on raw bytes, for go-plugin's own services,
// whose .proto files a plugin need not have.
function raw(service: string, method: string, answer: () => Buffer): [grpc.ServiceDefinition, grpc.UntypedServiceImplementation] {
  const id = (b: Buffer) => b;
  const def = {
    [method]: {
      path: `/${service}/${method}`, requestStream: false, responseStream: false,
      requestSerialize: id, requestDeserialize: id, responseSerialize: id, responseDeserialize: id,
    },
  };
  const impl = { [method]: (_: unknown, cb: grpc.sendUnaryData<Buffer>) => cb(null, answer()) };
  return [def as grpc.ServiceDefinition, impl];
}

function main() {
  if (process.env[COOKIE_KEY] !== COOKIE_VALUE) {
    process.stderr.write("This is a tickemu plugin: tickemu starts it (put it on --plugin-dir).\n");
    process.exit(1);
  }
  const versions = (process.env.PLUGIN_PROTOCOL_VERSIONS ?? "").split(",");
  if (!versions.includes(String(APP_PROTOCOL))) {
    process.stderr.write(`${NAME} speaks protocol ${APP_PROTOCOL}; the host speaks ${versions}\n`);
    process.exit(1);
  }
  const protoDir = path.join(__dirname, "proto");
  const def = protoLoader.loadSync(["tickemu/plugin/v2/governor.proto", "tickemu/plugin/v2/catalog.proto"], {
    includeDirs: [protoDir], keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true,
  });
  const v2 = (grpc.loadPackageDefinition(def) as any).tickemu.plugin.v2;

  const server = new grpc.Server();
  server.addService(v2.GovernorService.service, { GovernorSession: session });
  server.addService(v2.CatalogService.service, {
    Describe: (_: unknown, cb: grpc.sendUnaryData<any>) => cb(null, { plugins: [{ info, schema }] }),
  });
  // grpc.health.v1.Health/Check: HealthCheckResponse{status: SERVING (1)}.
  server.addService(...raw("grpc.health.v1.Health", "Check", () => Buffer.from([0x08, 0x01])));
  // plugin.GRPCController/Shutdown(Empty) returns (Empty): exit after answering.
  server.addService(...raw("plugin.GRPCController", "Shutdown", () => {
    setTimeout(() => server.tryShutdown(() => process.exit(0)), 10);
    return Buffer.alloc(0);
  }));

  const dir = process.env.PLUGIN_UNIX_SOCKET_DIR || fs.mkdtempSync(path.join(os.tmpdir(), `${NAME}-`));
  const sock = path.join(dir, `${NAME}-${process.pid}.sock`);
  server.bindAsync(`unix:${sock}`, grpc.ServerCredentials.createInsecure(), (err) => {
    if (err) {
      process.stderr.write(`${NAME}: listen on ${sock}: ${err.message}\n`);
      process.exit(1);
    }
    process.stdout.write(`1|${APP_PROTOCOL}|unix|${sock}|grpc\n`);
  });
}

main();
