package contract

import (
	"slices"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/sdk/model"
)

// Declared answer models (sdk.NextTimerModel, sdk.HRTimerModel) are checked
// in process too. Out of process the transport answers the calls a model
// covers from the model and checks the plugin's real answers against it
// (framework/sdk/shim); a plugin linked in answers every call itself,
// so a model that differs from its answers would go unnoticed and the same
// plugin would give different results in the two modes. The checker
// therefore computes, for every call a model covers under the same
// preconditions as the transport, the model's answer (framework/sdk/model)
// and compares it with the plugin's: a difference is the same
// *sdk.ContractError, with the same text, as out of process. The transport's
// client declares no model itself, so out of process nothing is checked
// twice.

// ntModels is the checker's side of a wheel's sdk.NextTimerModel. A model
// holds from when it is asked until a call other than NextTimerInterrupt,
// the first call under it costing Cost (the transport asks after each
// message), so the checker asks for it right before a call it checks.
type ntModels struct {
	md     sdk.NextTimerModeler // nil: the plugin declares none
	sample sampler
}

// modelledNextTimer is NextTimerInterruptInto for a sampled call: the
// plugin's answer, checked against its model's when the model covers it.
// Out of line, so the calls not sampled pay a counter only.
//
//go:noinline
func (c *timerBase) modelledNextTimer(cpu int, jiffies uint64, r *sdk.NextTimerResult) {
	m := c.models.md.NextTimerModel(cpu)
	want, ok := model.NextTimer(&m, jiffies, false)
	if c.inPlace != nil {
		c.inPlace.NextTimerInterruptInto(cpu, jiffies, r)
	} else {
		*r = c.tb.NextTimerInterrupt(cpu, jiffies)
	}
	if ok && *r != want {
		c.violation("NextTimerInterrupt", "answered %+v where its declared model (sdk.NextTimerModel) gives %+v", *r, want)
	}
}

// modelledStart is Start for a sampled call (see modelledNextTimer).
//
//go:noinline
func (c *hrTimerBase) modelledStart(cpu int, now ktime.Time, t sdk.HRTimer, expires ktime.Time, slack int64) sdk.HROpResult {
	want, ok := c.models.start(cpu, now, t, expires, slack)
	r := c.hb.Start(cpu, now, t, expires, slack)
	if ok && !model.HROpEqual(r, want) {
		c.violation("Start", "answered %+v where its declared model (sdk.HRTimerModel) gives %+v", r, want)
	}
	return r
}

// modelledInterrupt is Interrupt for a sampled call.
//
//go:noinline
func (c *hrTimerBase) modelledInterrupt(cpu int, now ktime.Time) sdk.InterruptResult {
	want, ok := c.models.interrupt(cpu, now)
	r := c.hb.Interrupt(cpu, now)
	if ok && !model.InterruptEqual(r, want) {
		c.violation("Interrupt", "answered %+v where its declared model (sdk.HRTimerModel) gives %+v", r, want)
	}
	return r
}

// modelledNextEvent is NextEvent for a sampled call.
//
//go:noinline
func (c *hrTimerBase) modelledNextEvent(cpu int, now ktime.Time, exclude sdk.TimerID) ktime.Time {
	want, ok := c.models.nextEvent(cpu, exclude)
	t := c.hb.NextEvent(cpu, now, exclude)
	if ok && t != want {
		c.violation("NextEvent", "answered %d where its declared model (sdk.HRTimerModel) gives %d", t, want)
	}
	return t
}

// hrModels is the checker's side of an hrtimer base's sdk.HRTimerModel. A
// model holds for its CPU only while none of the CPU's timers is elsewhere:
// on a checked Start the other CPUs' models must be valid and not list the
// timer. busyUntil is the latest end of an interrupt or softirq answer,
// before which a callback may still be running (and its timer stays where
// it runs, which no model says).
type hrModels struct {
	md        sdk.HRTimerModeler // nil: the plugin declares none
	cpus      int
	busyUntil ktime.Time
	sample    sampler
}

// Asking the plugin for its model on every call costs more than the calls
// (the HRTimerModel's queue is a copy): BenchmarkEngine64, checking every
// call, cpu-ms per simulated second 200 -> 865 (cyclictest) and 7200 ->
// 42900 (posix-signals). So the checker compares the first modelCheckAll
// answers of each kind of call and one in modelCheckEvery after that: a
// model that lies from the start is caught at the same call as out of
// process, with the same error; one that starts lying later is caught
// within modelCheckEvery calls. The sample is a count, so it is the same on
// every run.
const (
	modelCheckAll   = 16
	modelCheckEvery = 1 << 16 // a power of two
)

// sampler says which calls are checked.
type sampler struct{ n uint64 }

func (s *sampler) due() bool {
	s.n++
	return s.n <= modelCheckAll || s.n&(modelCheckEvery-1) == 0
}

// model returns cpu's declared model, nil when it is not valid.
func (h *hrModels) model(cpu int) *sdk.HRTimerModel {
	if h.md == nil {
		return nil
	}
	m := h.md.HRTimerModel(cpu)
	if !m.Valid {
		return nil
	}
	return &m
}

// start returns the model's answer to Start and whether it covers the call
// (the transport's preconditions: a timer kept local, no callback possibly
// running, queued nowhere else).
func (h *hrModels) start(cpu int, now ktime.Time, t sdk.HRTimer, expires ktime.Time, slack int64) (sdk.HROpResult, bool) {
	local := t.Placement == nil || t.Mode&sdk.HRModePinned != 0
	if !local || now < h.busyUntil {
		return sdk.HROpResult{}, false
	}
	for other := 0; other < h.cpus; other++ {
		if other == cpu {
			continue
		}
		m := h.md.HRTimerModel(other)
		if !m.Valid || slices.ContainsFunc(m.Queue, func(q sdk.HRQueued) bool { return q.ID == t.ID }) {
			return sdk.HROpResult{}, false
		}
	}
	m := h.model(cpu)
	if m == nil {
		return sdk.HROpResult{}, false
	}
	return model.HRStart(m, now, t, expires, slack)
}

// expired notes the end of an interrupt or softirq answer.
func (h *hrModels) expired(r *sdk.InterruptResult) {
	if h.md == nil {
		return
	}
	h.busyUntil = max(h.busyUntil, r.End)
}

// nextEvent returns the model's answer to NextEvent and whether it covers
// the call.
func (h *hrModels) nextEvent(cpu int, exclude sdk.TimerID) (ktime.Time, bool) {
	m := h.model(cpu)
	if m == nil {
		return 0, false
	}
	return model.HRNextEvent(m, exclude)
}

// interrupt returns the model's answer to Interrupt and whether it covers
// the call.
func (h *hrModels) interrupt(cpu int, now ktime.Time) (sdk.InterruptResult, bool) {
	m := h.model(cpu)
	if m == nil {
		return sdk.InterruptResult{}, false
	}
	return model.HRInterrupt(m, now)
}
