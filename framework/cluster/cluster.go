// Package cluster writes the jobs that run a sharded comparison on a
// cluster: a Slurm array script (Slurm) and a Kubernetes Indexed Job
// manifest (Kubernetes). Each runs `tickemu compare ... --shard I/N` once
// per shard, the results going to one directory, and `tickemu merge` puts
// them together into what the comparison run in one place prints.
package cluster

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// Job describes a sharded comparison.
type Job struct {
	// Name names the job (Slurm --job-name, the Kubernetes Job).
	Name string
	// Tickemu is the tickemu binary the shards and the merge run: an
	// absolute path on the cluster's shared file system for Slurm, the
	// command in the image for Kubernetes.
	Tickemu string
	// File is the configuration file; Args the compare flags besides
	// --shard and --jobs (the file is not among them).
	File string
	Args []string
	// Shards is the number of shards (array tasks, Job completions), CPUs
	// the CPUs each shard gets (its --jobs).
	Shards, CPUs int
	// Results is the directory the shard files and the merged comparison go
	// to (Slurm: an absolute path every node sees; Kubernetes: the mount
	// path of the results volume).
	Results string
	// Kubernetes only: the image holding the tickemu binary, the
	// PersistentVolumeClaim the results go to, and the configuration
	// file's content (it goes into a ConfigMap, mounted at /config).
	Image, Claim string
	Config       []byte
	// Resources and accounting, each empty for the cluster's default:
	// Time bounds each shard's wall-clock time (Slurm --time: MINUTES,
	// HH:MM:SS, D-HH:MM...), Mem each shard's and the merge's memory
	// (Slurm --mem: 4G; Kubernetes: a request and limit of 4Gi), Partition
	// and Account the Slurm partition and account, Namespace the
	// Kubernetes namespace.
	Time, Mem, Partition, Account, Namespace string
}

var (
	slurmTime = regexp.MustCompile(`^(\d+-)?\d+(:\d+){0,2}$`)
	slurmMem  = regexp.MustCompile(`^[1-9]\d*[KMGT]?$`)
	slurmName = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
)

// checkResources refuses resource and accounting values the scheduler
// would not take, naming the flag.
func (j Job) checkResources() error {
	switch {
	case j.Time != "" && !slurmTime.MatchString(j.Time):
		return fmt.Errorf("--time %q: want minutes, HH:MM:SS or D-HH:MM:SS (Slurm's --time)", j.Time)
	case j.Mem != "" && !slurmMem.MatchString(j.Mem):
		return fmt.Errorf("--mem %q: want a size such as 4G or 512M (K, M, G, T: powers of 1024)", j.Mem)
	case j.Partition != "" && !slurmName.MatchString(j.Partition):
		return fmt.Errorf("--partition %q: want letters, digits, '_', '.' or '-'", j.Partition)
	case j.Account != "" && !slurmName.MatchString(j.Account):
		return fmt.Errorf("--account %q: want letters, digits, '_', '.' or '-'", j.Account)
	case j.Namespace != "" && !jobName.MatchString(j.Namespace):
		return fmt.Errorf("--namespace %q: want lower-case letters, digits and '-' (a Kubernetes name)", j.Namespace)
	}
	return nil
}

// ShardFile is the name of shard i's results in the results directory.
func ShardFile(i int) string { return fmt.Sprintf("shard-%d.json", i) }

// ReportFile is the name of the merged comparison's HTML report in the
// results directory (the text goes to compare.txt).
const ReportFile = "compare.html"

// MergeArgs are the arguments of the merge of every shard file in dir; it
// writes the HTML report to dir/compare.html too.
func (j Job) MergeArgs(dir string) []string {
	args := []string{"merge", "--report", filepath.Join(dir, ReportFile)}
	for i := 1; i <= j.Shards; i++ {
		args = append(args, filepath.Join(dir, ShardFile(i)))
	}
	return args
}

// check rejects jobs the scripts cannot express.
func (j Job) check() error {
	switch {
	case j.Shards < 1:
		return fmt.Errorf("--shards %d: want at least 1", j.Shards)
	case j.CPUs < 1:
		return fmt.Errorf("--cpus-per-shard %d: want at least 1", j.CPUs)
	case j.Name == "" || !jobName.MatchString(j.Name):
		return fmt.Errorf("job name %q: want lower-case letters, digits and '-' (a Kubernetes name)", j.Name)
	case j.Results == "":
		return fmt.Errorf("no results directory")
	}
	if err := j.checkResources(); err != nil {
		return err
	}
	return j.checkValues()
}

var jobName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,50}[a-z0-9])?$`)

// JobName makes a job name from a configuration file's name:
// configs/nohz-catchup.hcl -> tickemu-nohz-catchup.
func JobName(file string) string {
	base := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	var b strings.Builder
	for _, r := range strings.ToLower(base) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	name := strings.Trim("tickemu-"+b.String(), "-")
	if len(name) > 52 {
		name = strings.TrimRight(name[:52], "-")
	}
	return name
}

// safe refuses a value that a job script, an #SBATCH line or a manifest
// comment cannot carry as it is: a control character (a newline would end a
// comment and start a command or a YAML document), any other character that
// is not printable, or invalid UTF-8. Such a
// value is never needed by a comparison, so it is refused rather than
// escaped.
func safe(what, v string) error {
	if !utf8.ValidString(v) {
		return fmt.Errorf("%s %q is not valid UTF-8", what, v)
	}
	for _, r := range v {
		if unicode.IsControl(r) {
			return fmt.Errorf("%s %q holds the control character %U: a job script or manifest cannot carry it safely", what, v, r)
		}
		// POSIX sh has no escapes: syntax.Quote cannot quote for it a
		// character that is not printable (a format character such as a
		// bidi override, a space other than U+0020, an unassigned code
		// point, U+FFFD). FuzzEmitters found U+07B5 panicking here.
		if !unicode.IsPrint(r) || r == utf8.RuneError {
			return fmt.Errorf("%s %q holds the character %U, which is not printable: a job script or manifest cannot carry it safely", what, v, r)
		}
	}
	return nil
}

// checkValues refuses every value of the job that a script cannot carry.
func (j Job) checkValues() error {
	vals := [][2]string{{"tickemu binary", j.Tickemu}, {"configuration file", j.File}, {"results directory", j.Results},
		{"image", j.Image}, {"claim", j.Claim}}
	for _, a := range j.Args {
		vals = append(vals, [2]string{"argument", a})
	}
	for _, v := range vals {
		if err := safe(v[0], v[1]); err != nil {
			return err
		}
	}
	return nil
}

// shellQuote quotes s as one word of lang (mvdan.cc/sh's quoting: a bash
// script, or POSIX sh for what sbatch --wrap runs). The values reaching it
// passed checkValues, so quoting cannot fail but for a NUL byte, which
// safe refuses too.
func shellQuote(s string, lang syntax.LangVariant) string {
	q, err := syntax.Quote(s, lang)
	if err != nil {
		panic(fmt.Sprintf("cluster: quoting a checked value %q: %v", s, err))
	}
	return q
}

func shellJoin(args []string, lang syntax.LangVariant) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a, lang)
	}
	return strings.Join(q, " ")
}
