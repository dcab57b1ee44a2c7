package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// hashVersion changes whenever the hashed document changes shape, so hashes
// from different tickemu versions never collide by accident.
const hashVersion = 4 // 2: a block without isolation hashes as "" (the loader decides), not "inprocess"; 3: the governor block; 4: no seed, swept settings left out

// The hashed document: the evaluated configuration with no source positions,
// no comments, no variable or variant names and no descriptions. encoding/json
// writes map keys sorted, and values are cty values in JSON form, so the bytes
// depend only on what the configuration evaluates to. Plugin, kernel and
// workload bodies are hashed as evaluated attributes, before their schemas
// fill in defaults: a file that spells out a default hashes differently from
// one that omits it.
//
// The seed is not hashed, and neither is any setting a sweep sets (directly
// or through a variable): they are keys of an experiment's results (seeds,
// /hz=250), so every run of one experiment, whatever its seed and sweep
// point, carries the same hash and benchstat keeps them in one table. The
// names of the swept settings are hashed instead.
type (
	hashDoc struct {
		Version   int            `json:"v"`
		Machine   hashMachine    `json:"machine"`
		Plugins   []hashPlugin   `json:"plugins"`
		Kernel    hashBody       `json:"kernel"`
		Workloads []hashWorkload `json:"workloads"`
		Run       hashRun        `json:"run"`
		Swept     []string       `json:"swept"`
		// The kernel version and bisect presets, when set (absent, the
		// hash of a file is what it was before versions existed).
		KernelVersion string            `json:"kernel_version,omitempty"`
		Presets       map[string]string `json:"presets,omitempty"`
	}
	hashMachine struct {
		CPUs       int         `json:"cpus"`
		HZ         int         `json:"hz"`
		NoHZ       string      `json:"nohz"`
		NoHZFull   string      `json:"nohz_full"`
		IsolCPUs   string      `json:"isolcpus"`
		HighRes    bool        `json:"highres"`
		IdleStates []hashState `json:"idle_states"`
	}
	hashState struct {
		Name            string `json:"name"`
		ExitLatency     int64  `json:"exit_latency_ns"`
		TargetResidency int64  `json:"target_residency_ns"`
		StopsLocalTimer bool   `json:"stops_local_timer"`
	}
	hashPlugin struct {
		Kind      string   `json:"kind"`
		Role      string   `json:"role"`
		Plugin    string   `json:"plugin"`
		Isolation string   `json:"isolation"`
		Body      hashBody `json:"body"`
	}
	hashWorkload struct {
		Type string   `json:"type"`
		Name string   `json:"name"`
		Body hashBody `json:"body"`
	}
	hashRun struct {
		Duration int64 `json:"duration_ns"`
		Warmup   int64 `json:"warmup_ns"`
	}
	hashBody struct {
		Attrs  map[string]json.RawMessage `json:"attrs"`
		Blocks []hashBlock                `json:"blocks"`
	}
	hashBlock struct {
		Type   string   `json:"type"`
		Labels []string `json:"labels"`
		Body   hashBody `json:"body"`
	}
)

// hash computes Spec.Hash. Evaluation errors in opaque bodies are reported:
// they would fail later anyway, and a hash of a half-evaluated file means nothing.
func (l *loader) hash() string {
	s := l.spec
	m := s.Machine
	doc := hashDoc{
		Version: hashVersion,
		Machine: hashMachine{
			CPUs: m.CPUs, HZ: m.HZ, NoHZ: m.NoHZ, HighRes: m.HighRes,
			NoHZFull: FormatCPUList(m.NoHZFull), IsolCPUs: FormatCPUList(m.IsolCPUs),
			IdleStates: []hashState{},
		},
		Plugins:   []hashPlugin{},
		Workloads: []hashWorkload{},
		Run:       hashRun{Duration: s.Run.Duration, Warmup: s.Run.Warmup},
		Swept:     append([]string{}, l.sweptNames...),
	}
	// A swept host setting is left out (its zero value).
	hm := &doc.Machine
	for name, field := range map[string]func(){
		"cpus": func() { hm.CPUs = 0 }, "hz": func() { hm.HZ = 0 }, "nohz": func() { hm.NoHZ = "" },
		"nohz_full": func() { hm.NoHZFull = "" }, "isolcpus": func() { hm.IsolCPUs = "" }, "highres": func() { hm.HighRes = false },
	} {
		if l.sweptIn(blockMachine, name) {
			field()
		}
	}
	if l.sweptIn(blockRun, "duration") {
		doc.Run.Duration = 0
	}
	if l.sweptIn(blockRun, "warmup") {
		doc.Run.Warmup = 0
	}
	if !s.KernelVersion.IsZero() {
		doc.KernelVersion = s.KernelVersion.String()
	}
	for k, v := range s.presets {
		if doc.Presets == nil {
			doc.Presets = map[string]string{}
		}
		doc.Presets[k.Kind+"/"+k.Plugin+"/"+k.Attr] = v
	}
	for _, st := range m.IdleStates {
		doc.Machine.IdleStates = append(doc.Machine.IdleStates, hashState{st.Name, st.ExitLatency, st.TargetResidency, st.StopsLocalTimer})
	}
	for _, p := range s.Plugins {
		doc.Plugins = append(doc.Plugins, hashPlugin{
			Kind: string(p.Kind), Role: p.Role, Plugin: p.Plugin, Isolation: p.Isolation,
			Body: l.hashBody(p.Body, pluginHostAttrs),
		})
	}
	doc.Kernel = l.hashBody(s.Kernel, nil)
	for _, w := range s.Workloads {
		doc.Workloads = append(doc.Workloads, hashWorkload{Type: w.Type, Name: w.Name, Body: l.hashBody(w.Body, nil)})
	}
	if l.diags.HasErrors() {
		return ""
	}
	b, err := json.Marshal(doc)
	if err != nil {
		panic(fmt.Sprintf("config: marshal hash document: %v", err))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// hashBody evaluates every attribute of body except skip, and its nested
// blocks in file order. A plugin block's Body hides plugin and isolation, but
// only from Content calls, so they are skipped by name here.
func (l *loader) hashBody(body hcl.Body, skip []string) hashBody {
	hb := hashBody{Attrs: map[string]json.RawMessage{}, Blocks: []hashBlock{}}
	sb, ok := body.(*hclsyntax.Body)
	if !ok {
		// Only native syntax is parsed; an empty body has nothing to hash.
		return hb
	}
	names := make([]string, 0, len(sb.Attributes))
	for n, a := range sb.Attributes {
		if !slices.Contains(skip, n) && !l.swept(a) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		a := sb.Attributes[n]
		val, diags := evalExpr(a.Expr, l.ctx, l.budget)
		l.diags = append(l.diags, diags...)
		if diags.HasErrors() {
			continue
		}
		hb.Attrs[n] = hashValue(val)
	}
	for _, b := range sb.Blocks {
		hb.Blocks = append(hb.Blocks, hashBlock{Type: b.Type, Labels: append([]string{}, b.Labels...), Body: l.hashBody(b.Body, nil)})
	}
	return hb
}

// hashValue encodes a wholly known value as JSON. cty iterates object
// attributes and map keys in sorted order, and numbers print exactly.
func hashValue(v cty.Value) json.RawMessage {
	v, _ = v.UnmarkDeep()
	if v.IsNull() {
		return json.RawMessage("null")
	}
	if !v.IsWhollyKnown() {
		return json.RawMessage(`"(unknown)"`)
	}
	b, err := ctyjson.Marshal(v, v.Type())
	if err != nil {
		panic(fmt.Sprintf("config: marshal evaluated value %#v: %v", v, err))
	}
	return b
}
