// hang_cap: the hang-cap strategy as a tickemu hang_policy plugin in
// TypeScript on Node. After hrtimer_interrupt() gives up, the next event is
// delayed by min(cap, min(100 ms, max_hang_time)), hang_detected kept: the
// builtin max_hang_time policy capped again (examples/hangcap is the same in
// Go, examples/hangcap-python in Python). It follows docs/protocol.md: the
// go-plugin handshake, the health and controller services, the catalog and
// the policy session (HangPolicyService) on the gRPC stream; it does not
// offer the optional session socket. The .proto files are loaded at run time
// from proto/ next to the compiled file (scripts/build-node-hangcap.sh puts
// them there), with @grpc/proto-loader; int64 fields arrive as JS numbers,
// exact up to 2^53 ns (104 days of simulated time).
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

const COOKIE_KEY = "TICKEMU_PLUGIN_MAGIC_COOKIE";
const COOKIE_VALUE = "7f3c1d0b-tickemu-timekeeping-plugin";
const APP_PROTOCOL = 5;
const NAME = "hang_cap";
const MS = 1_000_000;

const info = {
  kind: "hang_policy", name: NAME, version: "1.0.0",
  description: "hang delay = min(cap, min(100 ms, max_hang_time)), hang_detected kept",
};
const schema = {
  attributes: [{
    name: "cap", type: "duration", default_value: "1us", min_value: "0ns", max_value: "10s",
    doc: "the longest hang delay",
  }],
};

interface HangRequest { cpu: number; now: number; entry: number; nr_hangs: number; max_hang_time: number }
interface HangDecision { delay: number; keep_detected: boolean }

// One plugin value: the state of one session.
class HangCap {
  cap = 1000;
  decisions = 0;

  // The strategy (what the Go, Python and TypeScript versions count).
  hang(r: HangRequest): HangDecision {
    this.decisions++;
    return { delay: Math.min(this.cap, 100 * MS, r.max_hang_time), keep_detected: true };
  }

  configure(req: { config: { key: string; value: string }[] }) {
    const cap = req.config.find((e) => e.key === "cap");
    const v = cap === undefined ? 1000 : Number(cap.value); // canonical: integer ns
    if (!Number.isSafeInteger(v) || v < 0) {
      return { diagnostics: [{ severity: "SEVERITY_ERROR", attribute: "cap", summary: `cap ${cap?.value} is not a duration in ns` }] };
    }
    this.cap = v;
    this.decisions = 0;
    return { diagnostics: [] };
  }

  plugin(req: any): any {
    switch (req.call) {
      case "configure": return { configure: this.configure(req.configure) };
      case "info": return { info: { info } };
      case "schema": return { schema: { schema } };
      case "counters": return { counters: { counters: [{ name: "decisions", cpu: -1, value: this.decisions }] } };
    }
    throw new Failure(grpc.status.UNIMPLEMENTED, `unknown plugin call ${req.call}`);
  }

  call(c: any): any {
    switch (c.call) {
      case "hang": return { hang: this.hang(c.hang) };
      case "plugin": return { plugin: this.plugin(c.plugin) };
    }
    throw new Failure(grpc.status.INVALID_ARGUMENT, `${c.call} call to a hang_policy plugin`);
  }
}

// Failure ends a session with a gRPC status.
class Failure extends Error {
  constructor(readonly code: grpc.status, message: string) { super(message); }
}

function fail(stream: grpc.ServerDuplexStream<any, any>, e: unknown) {
  const f = e instanceof Failure ? e : new Failure(grpc.status.INTERNAL, `hang_cap: ${e instanceof Error ? e.message : String(e)}`);
  stream.destroy(Object.assign(new Error(f.message), { code: f.code, details: f.message }));
}

// HangPolicySession: open, then one answer per message, in order.
function session(stream: grpc.ServerDuplexStream<any, any>) {
  let p: HangCap | undefined;
  stream.on("data", (req: { calls: any[] }) => {
    try {
      if (p === undefined) {
        const c = req.calls.length === 1 ? req.calls[0] : undefined;
        if (c?.call !== "plugin" || c.plugin.call !== "open") {
          throw new Failure(grpc.status.INVALID_ARGUMENT, "session must start with an OpenRequest");
        }
        if (c.plugin.open.name !== NAME) {
          throw new Failure(grpc.status.NOT_FOUND, `no hang_policy plugin "${c.plugin.open.name}" here (serving [${NAME}])`);
        }
        p = new HangCap();
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
    process.stderr.write(`hang_cap speaks protocol ${APP_PROTOCOL}; the host speaks ${versions}\n`);
    process.exit(1);
  }
  const protoDir = path.join(__dirname, "proto");
  const def = protoLoader.loadSync(["tickemu/plugin/v2/policy.proto", "tickemu/plugin/v2/catalog.proto"], {
    includeDirs: [protoDir], keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true,
  });
  const v2 = (grpc.loadPackageDefinition(def) as any).tickemu.plugin.v2;

  const server = new grpc.Server();
  server.addService(v2.HangPolicyService.service, { HangPolicySession: session });
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

  const dir = process.env.PLUGIN_UNIX_SOCKET_DIR || fs.mkdtempSync(path.join(os.tmpdir(), "hang_cap-"));
  const sock = path.join(dir, `hang_cap-${process.pid}.sock`);
  server.bindAsync(`unix:${sock}`, grpc.ServerCredentials.createInsecure(), (err) => {
    if (err) {
      process.stderr.write(`hang_cap: listen on ${sock}: ${err.message}\n`);
      process.exit(1);
    }
    process.stdout.write(`1|${APP_PROTOCOL}|unix|${sock}|grpc\n`);
  });
}

main();
