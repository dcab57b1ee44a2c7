package sdk

// Era is one span of kernel releases during which a strategy attribute has
// one value. An attribute whose kernel behaviour changed between releases
// lists its eras in Attribute.Eras, oldest first: the first era is the state
// at the oldest release tickemu models (its Since is that release or older,
// and it names no commit), each later era is one modelled kernel change.
// `kernel { version = "6.13" }` and `--kernel-version` set every such
// attribute the file leaves unset to the value of the last era whose Since is
// not after the release; `tickemu bisect` applies the changes one by one;
// docs/kernel-changes.md is generated from the eras of every builtin.
//
// A third-party plugin declares its eras the same way, in its Schema; they
// travel in the describe answer, so a plugin in its own process takes part as
// a linked-in one does.
type Era struct {
	// Since is the first mainline release with Value, "MAJOR.MINOR"
	// ("6.13"): the first release tag that contains Commit. A stable
	// series that took the change earlier is named in Backports.
	Since string
	// Value is the attribute's value from Since on, in the attribute's
	// source form (as Default is written).
	Value string
	// Commit is the first 12 hex digits of the mainline commit that made
	// the change; empty for the first era, and for a change whose commit id
	// is not known (Note then says why).
	Commit string
	// Title is the commit's subject line ("posix-timers: Make signal
	// delivery consistent").
	Title string
	// Note says what else a reader needs: the rest of a series, where a
	// stable backport was seen, where an unknown id was looked for.
	Note string
	// Backports names the stable point releases that carry the change
	// before Since, one per stable series, comma-separated ("6.12.80,
	// 6.18.44"): from each, that series' later point releases have Value
	// too. A version such as `kernel { version = "6.18.44" }` takes the
	// change; "6.18", the series' first release, does not. Each is the
	// first point release known to carry it (its stable commit, or a
	// kernel seen to behave so: Note says which).
	Backports string
}

// Strategy reports whether the attribute is a strategy: a string with
// allowed values (OneOf) or a bool. Every strategy attribute either follows
// the kernel release (Eras) or says why not (Unversioned); a cost or count is
// tuning, not a strategy.
func (a Attribute) Strategy() bool {
	return len(a.OneOf) > 0 || a.Type == TypeBool
}
