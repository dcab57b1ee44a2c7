package workload

import "github.com/tickemu/tickemu/framework/kernel"

// step produces a task's next action from the result of its previous one.
type step func(r kernel.Result) kernel.Action

// sequence is a Program that runs setup once, then loop forever: the usual
// shape of a benchmark's main().
func sequence(setup []step, loop []step) kernel.Program {
	return &seqProgram{setup: setup, loop: loop}
}

// seqProgram is sequence's Program: a method, not a closure, and the loop's
// position kept as an index (no division per step).
type seqProgram struct {
	setup, loop []step
	i           int // steps of setup done
	j           int // the loop step next
}

func (p *seqProgram) Next(_ *kernel.Task, r kernel.Result) kernel.Action {
	if p.i < len(p.setup) {
		s := p.setup[p.i]
		p.i++
		return s(r)
	}
	s := p.loop[p.j]
	if p.j++; p.j == len(p.loop) {
		p.j = 0
	}
	return s(r)
}

// do wraps a fixed action as a step.
func do(a kernel.Action) step { return func(kernel.Result) kernel.Action { return a } }
