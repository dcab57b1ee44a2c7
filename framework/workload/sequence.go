package workload

import "github.com/tickemu/tickemu/framework/kernel"

// step produces a task's next action from the result of its previous one.
type step func(r kernel.Result) kernel.Action

// sequence is a Program that runs setup once, then loop forever: the usual
// shape of a benchmark's main().
func sequence(setup []step, loop []step) kernel.Program {
	i := 0
	return kernel.ProgramFunc(func(t *kernel.Task, r kernel.Result) kernel.Action {
		var s step
		if i < len(setup) {
			s = setup[i]
		} else {
			s = loop[(i-len(setup))%len(loop)]
		}
		i++
		return s(r)
	})
}

// do wraps a fixed action as a step.
func do(a kernel.Action) step { return func(kernel.Result) kernel.Action { return a } }
