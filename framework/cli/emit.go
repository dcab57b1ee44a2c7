package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"

	"github.com/tickemu/tickemu/framework/cluster"
	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/experiment"
)

// emitFlags are compare's flags that write a cluster job instead of running.
type emitFlags struct {
	target  string // slurm or k8s
	shards  int
	cpus    int
	results string
	tickemu string
	image   string
	claim   string

	time, mem, partition, account, namespace string
}

func (e *emitFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&e.target, "emit", "", "write a cluster job that runs the comparison in shards instead of running it: slurm (sbatch array script) or k8s (Kubernetes Indexed Job manifest)")
	fs.IntVar(&e.shards, "shards", 0, "with --emit: number of shards (array tasks, Job completions)")
	fs.IntVar(&e.cpus, "cpus-per-shard", 1, "with --emit: CPUs of each shard (its --jobs)")
	fs.StringVar(&e.results, "results", "", "with --emit: directory of the shard results and the merged comparison (slurm default: ./tickemu-results; k8s: the claim's mount path, default /results)")
	fs.StringVar(&e.tickemu, "tickemu", "", "with --emit: the tickemu the jobs run (slurm default: this binary's absolute path; k8s default: tickemu, on the image's PATH)")
	fs.StringVar(&e.image, "image", "", "with --emit k8s: the container image holding tickemu")
	fs.StringVar(&e.claim, "claim", "tickemu-results", "with --emit k8s: the PersistentVolumeClaim the results go to (ReadWriteMany: every pod mounts it)")
	fs.StringVar(&e.time, "time", "", "with --emit slurm: each shard's time limit (sbatch --time: minutes, HH:MM:SS, D-HH:MM:SS); a shard stopped there keeps its finished runs (default: the partition's)")
	fs.StringVar(&e.mem, "mem", "", "with --emit: each shard's and the merge's memory, such as 4G (sbatch --mem; Kubernetes: request and limit 4Gi) (default: the cluster's)")
	fs.StringVar(&e.partition, "partition", "", "with --emit slurm: the Slurm partition (sbatch --partition)")
	fs.StringVar(&e.account, "account", "", "with --emit slurm: the Slurm account charged (sbatch --account)")
	fs.StringVar(&e.namespace, "namespace", "", "with --emit k8s: the Kubernetes namespace of every object (default: kubectl's current)")
}

// emitOnly are the flags that mean nothing without --emit, and the compare
// flags a shard's command line does not repeat.
var (
	emitOnly   = []string{"shards", "cpus-per-shard", "results", "tickemu", "image", "claim", "time", "mem", "partition", "account", "namespace"}
	notInShard = append([]string{"emit", "jobs", "format", "report", "shard"}, emitOnly...)
)

func (e *emitFlags) check(set map[string]bool, shard bool) error {
	if e.target == "" {
		for _, f := range emitOnly {
			if set[f] {
				return fmt.Errorf("--%s goes with --emit", f)
			}
		}
		return nil
	}
	switch {
	case e.target != "slurm" && e.target != "k8s":
		return fmt.Errorf("--emit %q: want slurm or k8s", e.target)
	case shard:
		return errors.New("--emit writes a job that runs every shard: drop --shard")
	case e.shards < 1:
		return fmt.Errorf("--emit needs --shards N (N >= 1), got %d", e.shards)
	case set["image"] && e.target != "k8s":
		return errors.New("--image goes with --emit k8s")
	case set["namespace"] && e.target != "k8s":
		return errors.New("--namespace goes with --emit k8s")
	case e.target == "k8s" && (set["time"] || set["partition"] || set["account"]):
		return errors.New("--time, --partition and --account go with --emit slurm (a Kubernetes Job's pods take --mem; --namespace names where they run)")
	case e.target == "k8s" && e.image == "":
		return errors.New("--emit k8s needs --image: the container image holding tickemu")
	}
	for _, f := range []string{"format", "report"} {
		if set[f] {
			return fmt.Errorf("--emit: --%s belongs to tickemu merge (the job's merge writes compare.txt and compare.html)", f)
		}
	}
	return nil
}

// write prints the job. The shards' command line repeats the compare flags
// that were given, except those about output and parallelism.
func (e *emitFlags) write(stdout, stderr io.Writer, fs *flag.FlagSet, set map[string]bool, file string, g experiment.Grid) int {
	j := cluster.Job{Name: cluster.JobName(file), Args: shardArgs(fs, set), Shards: e.shards, CPUs: e.cpus, Results: e.results,
		Tickemu: e.tickemu, Image: e.image, Claim: e.claim, Time: e.time, Mem: e.mem, Partition: e.partition, Account: e.account, Namespace: e.namespace}
	if n := g.Len(); e.shards > n {
		fmt.Fprintf(stderr, "tickemu: --shards %d: the experiment has %d runs, so %d shards would run nothing\n", e.shards, n, e.shards-n)
		return 2
	}
	var script string
	var err error
	switch e.target {
	case "slurm":
		script, err = slurmJob(j, file)
	case "k8s":
		script, err = kubernetesJob(j, file)
	}
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: --emit %s: %v\n", e.target, err)
		return 2
	}
	if _, err := io.WriteString(stdout, script); err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return 1
	}
	return 0
}

// shardArgs are the compare flags that were given (set) as a shard's
// command line repeats them: all but notInShard.
func shardArgs(fs *flag.FlagSet, set map[string]bool) []string {
	var args []string
	fs.VisitAll(func(f *flag.Flag) {
		if !set[f.Name] || slices.Contains(notInShard, f.Name) {
			return
		}
		if m, ok := f.Value.(*multiFlag); ok {
			for _, v := range *m {
				args = append(args, "--"+f.Name, v)
			}
			return
		}
		if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
			args = append(args, "--"+f.Name+"="+f.Value.String())
			return
		}
		args = append(args, "--"+f.Name, f.Value.String())
	})
	return args
}

// slurmJob is j as an sbatch array script: the file, the results directory
// (default ./tickemu-results) and tickemu (default this binary) made
// absolute, as the cluster's nodes see the same file system.
func slurmJob(j cluster.Job, file string) (string, error) {
	var err error
	if j.File, err = filepath.Abs(file); err != nil {
		return "", err
	}
	if j.Results == "" {
		j.Results = "tickemu-results"
	}
	if j.Results, err = filepath.Abs(j.Results); err != nil {
		return "", err
	}
	if j.Tickemu == "" {
		if j.Tickemu, err = os.Executable(); err != nil {
			return "", err
		}
	}
	if j.Tickemu, err = filepath.Abs(j.Tickemu); err != nil {
		return "", err
	}
	return cluster.Slurm(j)
}

// kubernetesJob is j as an Indexed Job manifest, the configuration file
// carried in it; results default to /results and tickemu to the image's.
func kubernetesJob(j cluster.Job, file string) (string, error) {
	j.File = file
	if j.Results == "" {
		j.Results = "/results"
	}
	if j.Tickemu == "" {
		j.Tickemu = "tickemu"
	}
	var err error
	if j.Config, err = config.ReadFile(file); err != nil {
		return "", err
	}
	return cluster.Kubernetes(j)
}

// fullVersion is the version shards record: the release version and, for a
// build from a checkout, its commit.
func fullVersion() string {
	v := version
	if bi, ok := debug.ReadBuildInfo(); ok {
		var rev, dirty string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = "-dirty"
				}
			}
		}
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if rev != "" {
			v += "+" + rev + dirty
		}
	}
	return v
}
