package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"mvdan.cc/sh/v3/syntax"
	k8sjson "sigs.k8s.io/json"
	k8syaml "sigs.k8s.io/yaml"
)

func testJob() Job {
	return Job{Name: "tickemu-nohz-catchup", Tickemu: "tickemu", File: "configs/nohz-catchup.hcl",
		Args: []string{"--seeds", "20", "--sweep", "hz=100,250", "--var", "duration=it's 2s"}, Shards: 4, CPUs: 2,
		Results: "/results", Image: "registry.example/tickemu:1", Claim: "runs", Config: []byte("run {\n  duration = \"2s\"\n}\n")}
}

// TestKubernetesManifest decodes the manifest strictly into the Kubernetes
// objects' shapes (an unknown or misplaced field fails) and checks what
// makes it an Indexed Job of one pod per shard, then runs a pod's command
// with a stand-in tickemu.
func TestKubernetesManifest(t *testing.T) {
	j := testJob()
	out, err := Kubernetes(j)
	if err != nil {
		t.Fatal(err)
	}
	cm, job, merge := manifestObjects(t, out)
	if cm.APIVersion != "v1" || cm.Kind != "ConfigMap" || cm.Data["nohz-catchup.hcl"] != string(j.Config) {
		t.Errorf("ConfigMap = %+v", cm)
	}
	s := job.Spec
	if job.APIVersion != "batch/v1" || job.Kind != "Job" || job.Name != j.Name {
		t.Errorf("job header = %s %s %s", job.APIVersion, job.Kind, job.Name)
	}
	if *s.CompletionMode != batchv1.IndexedCompletion || *s.Completions != 4 || *s.Parallelism != 4 || *s.BackoffLimit != 0 {
		t.Errorf("job spec = %+v", s)
	}
	ps := s.Template.Spec
	if ps.RestartPolicy != "Never" || len(ps.Containers) != 1 {
		t.Fatalf("pod spec = %+v", ps)
	}
	c := ps.Containers[0]
	if cpu := c.Resources.Requests[corev1.ResourceCPU]; c.Image != j.Image || cpu.String() != "2" || len(c.Command) != 3 || c.Command[0] != "/bin/sh" {
		t.Errorf("container = %+v", c)
	}
	vols := map[string]corev1.Volume{}
	for _, v := range ps.Volumes {
		vols[v.Name] = v
	}
	for _, m := range c.VolumeMounts {
		v, ok := vols[m.Name]
		if !ok {
			t.Errorf("mount %s has no volume", m.Name)
		}
		switch m.MountPath {
		case configDir:
			if v.ConfigMap == nil || v.ConfigMap.Name != cm.Name {
				t.Errorf("the config mount is %+v, not the ConfigMap %s", v, cm.Name)
			}
		case j.Results:
			if v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != "runs" {
				t.Errorf("the results mount is %+v, not the claim", v)
			}
		case "/tmp": // the root file system is read-only
			if v.EmptyDir == nil {
				t.Errorf("the /tmp mount is %+v, not an emptyDir", v)
			}
		default:
			t.Errorf("unexpected mount %+v", m)
		}
	}

	// Pod 2 of 4 (JOB_COMPLETION_INDEX=1) runs shard 2 into shard-2.json.
	dir := t.TempDir()
	bin := filepath.Join(dir, "tickemu")
	os.WriteFile(bin, []byte("#!/bin/sh\nfor a in \"$@\"; do printf '[%s]' \"$a\"; done\n"), 0o755)
	script := strings.ReplaceAll(c.Command[2], j.Results, dir)
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Env = append(os.Environ(), "JOB_COMPLETION_INDEX=1", "PATH="+dir+":"+os.Getenv("PATH"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pod command: %v\n%s", err, out)
	}
	got, err := os.ReadFile(filepath.Join(dir, "shard-2.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := "[compare][/config/nohz-catchup.hcl][--seeds][20][--sweep][hz=100,250][--var][duration=it's 2s][--jobs][2][--shard][2/4]"
	if string(got) != want {
		t.Errorf("pod 2 ran %s, want %s", got, want)
	}

	// A pod whose tickemu fails leaves shard-I.failed with its status and
	// no shard-I.json; one stopped by SIGTERM (143) keeps its file.
	for _, tc := range []struct {
		index, status int
		json          bool
	}{{2, 1, false}, {3, 143, true}} {
		os.WriteFile(bin, []byte(fmt.Sprintf("#!/bin/sh\necho '{}'\nexit %d\n", tc.status)), 0o755)
		cmd := exec.Command("/bin/sh", "-c", script)
		cmd.Env = append(os.Environ(), fmt.Sprintf("JOB_COMPLETION_INDEX=%d", tc.index), "PATH="+dir+":"+os.Getenv("PATH"))
		var ee *exec.ExitError
		if out, err := cmd.CombinedOutput(); !errors.As(err, &ee) || ee.ExitCode() != tc.status {
			t.Errorf("pod %d with tickemu exiting %d: %v\n%s", tc.index+1, tc.status, err, out)
		}
		_, errJSON := os.Stat(filepath.Join(dir, fmt.Sprintf("shard-%d.json", tc.index+1)))
		failed, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("shard-%d.failed", tc.index+1)))
		if (errJSON == nil) != tc.json || (string(failed) == fmt.Sprintf("%d\n", tc.status)) == tc.json {
			t.Errorf("pod %d with tickemu exiting %d: shard file %v, failed marker %q", tc.index+1, tc.status, errJSON, failed)
		}
	}

	// The merge Job runs at once (no suspend to patch), waits for a file
	// of every shard, says which shard failed, merges every shard into
	// compare.txt and compare.html, prints the comparison and exits with
	// the merge's status.
	ms := merge.Spec
	if merge.Name != MergeJobName(j.Name) || ms.Suspend != nil || *ms.Completions != 1 || *ms.BackoffLimit != 0 {
		t.Errorf("merge Job %s spec %+v", merge.Name, ms)
	}
	os.WriteFile(filepath.Join(dir, "shard-1.json"), []byte("{}"), 0o644)
	mc := ms.Template.Spec.Containers[0]
	if len(ms.Template.Spec.Volumes) != 2 || ms.Template.Spec.Volumes[0].PersistentVolumeClaim == nil || mc.VolumeMounts[0].MountPath != j.Results {
		t.Errorf("the merge pod does not mount the claim at %s: %+v", j.Results, ms.Template.Spec)
	}
	os.WriteFile(bin, []byte("#!/bin/sh\nfor a in \"$@\"; do printf '[%s]' \"$a\"; done\nexit 1\n"), 0o755)
	cmd = exec.Command("/bin/sh", "-c", strings.ReplaceAll(mc.Command[2], j.Results, dir))
	cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"))
	var mergeErr bytes.Buffer
	cmd.Stderr = &mergeErr
	logged, err := cmd.Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("merge pod: %v, want the merge's exit status 1", err)
	}
	if want := "tickemu merge: shard 3 of 4 failed (exit status 1): see its pod's log\n"; mergeErr.String() != want {
		t.Errorf("merge pod's stderr %q, want %q", mergeErr.String(), want)
	}
	want = "[merge][--report][" + dir + "/compare.html][" + dir + "/shard-1.json][" + dir + "/shard-2.json][" + dir + "/shard-3.json][" + dir + "/shard-4.json]"
	if txt, _ := os.ReadFile(filepath.Join(dir, "compare.txt")); string(txt) != want || string(logged) != want {
		t.Errorf("the merge pod wrote %q and logged %q, want %s", txt, logged, want)
	}
}

func TestSlurmScript(t *testing.T) {
	j := testJob()
	j.Tickemu, j.File, j.Results = "/opt/tickemu", "/shared/nohz catchup.hcl", "/shared/results"
	out, err := Slurm(j)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"#SBATCH --array=1-4\n", "#SBATCH --cpus-per-task=2\n", `sbatch --parsable --output="$results/shard-%a.log" "$0"`,
		"--dependency=afterany:\"$array\"", `/opt/tickemu compare '/shared/nohz catchup.hcl' --seeds 20 --sweep 'hz=100,250' --var "duration=it's 2s" --jobs`,
		"merge --report /shared/results/compare.html /shared/results/shard-1.json /shared/results/shard-2.json /shared/results/shard-3.json /shared/results/shard-4.json"} {
		if !strings.Contains(out, want) {
			t.Errorf("script lacks %q:\n%s", want, out)
		}
	}
	if b, err := exec.Command("bash", "-n", "-c", out).CombinedOutput(); err != nil {
		t.Errorf("bash -n: %v\n%s", err, b)
	}
	for _, bad := range []func(*Job){
		func(j *Job) { j.Results = "results" },
		func(j *Job) { j.Tickemu = "tickemu" },
		func(j *Job) { j.Results = "/shared/my results" },
		func(j *Job) { j.Shards = 0 },
		func(j *Job) { j.Name = "Bad_Name" },
	} {
		k := j
		bad(&k)
		if _, err := Slurm(k); err == nil {
			t.Errorf("Slurm(%+v): no error", k)
		}
	}
}

func TestJobName(t *testing.T) {
	for in, want := range map[string]string{
		"configs/nohz-catchup.hcl": "tickemu-nohz-catchup",
		"/x/LKP_timer.64.hcl":      "tickemu-lkp-timer-64",
		"a.hcl":                    "tickemu-a",
	} {
		if got := JobName(in); got != want || !jobName.MatchString(got) {
			t.Errorf("JobName(%q) = %q, want %q", in, got, want)
		}
	}
	if got := JobName(strings.Repeat("x", 100) + ".hcl"); len(got) > 52 || !jobName.MatchString(got) {
		t.Errorf("long name %q", got)
	}
	var b bytes.Buffer
	b.WriteString(shellJoin([]string{"a b", "it's", "plain/x=1"}, syntax.LangBash))
	if b.String() != `'a b' "it's" 'plain/x=1'` {
		t.Errorf("shellJoin = %s", b.String())
	}
}

// manifestObjects splits a manifest into its three documents and decodes
// each strictly into its Kubernetes API type; a fourth document fails.
func manifestObjects(t *testing.T, out string) (cm corev1.ConfigMap, job, merge batchv1.Job) {
	t.Helper()
	docs := strings.Split(out, "\n---\n")
	if len(docs) != 3 {
		t.Fatalf("%d documents, want 3:\n%s", len(docs), out)
	}
	for i, v := range []any{&cm, &job, &merge} {
		if err := decodeStrict(docs[i]+"\n", v); err != nil {
			t.Fatalf("document %d: %v\n%s", i+1, err, docs[i])
		}
	}
	return cm, job, merge
}

// decodeStrict decodes a YAML document into a Kubernetes API object as the
// API server's strict field validation does (apimachinery's strict
// serializer): YAML to JSON refusing duplicate keys (sigs.k8s.io/yaml), then
// case-sensitive JSON refusing unknown and duplicate fields
// (sigs.k8s.io/json). encoding/json alone would match field names
// case-insensitively.
func decodeStrict(doc string, v any) error {
	js, err := k8syaml.YAMLToJSONStrict([]byte(doc))
	if err != nil {
		return err
	}
	strict, err := k8sjson.UnmarshalStrict(js, v)
	if err != nil {
		return err
	}
	return errors.Join(strict...)
}

// TestKubernetesAPITypes decodes the manifest strictly into the Kubernetes
// API's own types, core/v1 ConfigMap and batch/v1 Job, so that a misspelt
// field, one at the wrong level or a value of the wrong type (a quantity,
// an int32) fails here rather than at `kubectl apply`.
func TestKubernetesAPITypes(t *testing.T) {
	j := testJob()
	j.Mem, j.Namespace = "4G", "kernel"
	out, err := Kubernetes(j)
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(out, "\n---\n")
	if len(docs) != 3 {
		t.Fatalf("%d documents, want 3:\n%s", len(docs), out)
	}
	for i := range docs[:2] {
		docs[i] += "\n" // the separator took its last line's end
	}
	var merge batchv1.Job
	if err := decodeStrict(docs[2], &merge); err != nil {
		t.Fatalf("merge Job: %v\n%s", err, docs[2])
	}
	if ms := merge.Spec; merge.Name != MergeJobName(j.Name) || ms.Suspend != nil ||
		ms.CompletionMode == nil || *ms.CompletionMode != batchv1.NonIndexedCompletion || ms.Completions == nil || *ms.Completions != 1 {
		t.Errorf("merge Job %s spec %+v", merge.Name, ms)
	}
	var cm corev1.ConfigMap
	if err := decodeStrict(docs[0], &cm); err != nil {
		t.Fatalf("ConfigMap: %v\n%s", err, docs[0])
	}
	var job batchv1.Job
	if err := decodeStrict(docs[1], &job); err != nil {
		t.Fatalf("Job: %v\n%s", err, docs[1])
	}
	if cm.APIVersion != "v1" || cm.Kind != "ConfigMap" || cm.Data["nohz-catchup.hcl"] != string(j.Config) {
		t.Errorf("ConfigMap %s %s %q", cm.APIVersion, cm.Kind, cm.Data)
	}
	s := job.Spec
	if job.APIVersion != "batch/v1" || job.Kind != "Job" || job.Name != j.Name ||
		s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion ||
		s.Completions == nil || *s.Completions != 4 || s.Parallelism == nil || *s.Parallelism != 4 ||
		s.BackoffLimit == nil || *s.BackoffLimit != 0 {
		t.Errorf("Job %s %s %s spec %+v", job.APIVersion, job.Kind, job.Name, s)
	}
	ps := s.Template.Spec
	if ps.RestartPolicy != corev1.RestartPolicyNever || len(ps.Containers) != 1 || len(ps.Volumes) != 3 {
		t.Fatalf("pod spec %+v", ps)
	}
	c := ps.Containers[0]
	if cpu := c.Resources.Requests[corev1.ResourceCPU]; cpu.String() != "2" {
		t.Errorf("cpu request %s, want 2", cpu.String())
	}
	// Memory, namespace and the pods' security context.
	if mem, lim := c.Resources.Requests[corev1.ResourceMemory], c.Resources.Limits[corev1.ResourceMemory]; mem.String() != "4Gi" || lim.String() != "4Gi" {
		t.Errorf("memory request %s, limit %s; want 4Gi (--mem 4G)", mem.String(), lim.String())
	}
	if cm.Namespace != "kernel" || job.Namespace != "kernel" || merge.Namespace != "kernel" {
		t.Errorf("namespaces %q %q %q, want kernel", cm.Namespace, job.Namespace, merge.Namespace)
	}
	for _, p := range []corev1.PodSpec{ps, merge.Spec.Template.Spec} {
		sc, csc := p.SecurityContext, p.Containers[0].SecurityContext
		if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser != 65534 || sc.FSGroup == nil ||
			csc == nil || csc.AllowPrivilegeEscalation == nil || *csc.AllowPrivilegeEscalation || csc.ReadOnlyRootFilesystem == nil ||
			!*csc.ReadOnlyRootFilesystem || csc.Capabilities == nil || len(csc.Capabilities.Drop) != 1 || csc.Capabilities.Drop[0] != "ALL" {
			t.Errorf("security contexts %+v %+v: want non-root, no privilege escalation, a read-only root, no capabilities", sc, csc)
		}
	}
	if !strings.Contains(out, "must exist and be ReadWriteMany") || !strings.Contains(out, "kubectl -n kernel logs job/"+merge.Name) {
		t.Errorf("the manifest's comment does not say the claim must be ReadWriteMany or give the namespace:\n%s", out)
	}
	if v := ps.Volumes[0]; v.ConfigMap == nil || v.ConfigMap.Name != cm.Name {
		t.Errorf("volume %+v is not the ConfigMap %s", v, cm.Name)
	}
	if v := ps.Volumes[1]; v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != j.Claim {
		t.Errorf("volume %+v is not the claim %s", v, j.Claim)
	}
	// The check catches what it is for: a misspelt field and a wrong type.
	for _, bad := range []struct{ from, to string }{
		{"completionMode:", "completionmode:"},
		{"backoffLimit: 0", "backoffLimit: none"},
		{"claimName:", "claim:"},
		{"cpu: \"2\"", "cpu: two"},
		{"parallelism: 4", "parallelism: 4\n  parallelism: 4"},
	} {
		doc := strings.Replace(docs[1], bad.from, bad.to, 1)
		if doc == docs[1] {
			t.Fatalf("the Job has no %q", bad.from)
		}
		var job batchv1.Job
		if err := decodeStrict(doc, &job); err == nil {
			t.Errorf("a Job with %q for %q decodes", bad.to, bad.from)
		}
	}
}

// hostile are values an attacker could put in a configuration file's path,
// a --var value, the results directory or the binary's path.
var hostile = []string{
	"$(touch PWNED)",
	"`touch PWNED`",
	"'; touch PWNED; '",
	`"; touch PWNED; "`,
	`\"; touch PWNED #`,
	"${IFS}touch${IFS}PWNED",
	"x: y # ---",
	"a\ntouch PWNED",
	"a\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: pwned",
	"a\rtouch PWNED",
	"a\x1b]0;title\x07",
	"bad\xffutf8",
}

// TestEmittersResistInjection puts each hostile value in each field of a
// job. Either the emitter refuses it, naming it, or the script and the
// manifest carry it as data: run under bash with sbatch and tickemu stood in
// for, nothing of it executes (no PWNED file) and tickemu receives it
// intact; the manifest still holds exactly its three objects.
func TestEmittersResistInjection(t *testing.T) {
	for _, h := range hostile {
		for _, field := range []string{"file", "arg", "results", "tickemu", "image", "claim"} {
			t.Run(fmt.Sprintf("%s=%q", field, h), func(t *testing.T) {
				dir := t.TempDir()
				j := testJob()
				j.Tickemu, j.File, j.Results = filepath.Join(dir, "bin", "tickemu"), filepath.Join(dir, "nohz.hcl"), filepath.Join(dir, "results")
				switch field {
				case "file":
					j.File = filepath.Join(dir, h+".hcl")
				case "arg":
					j.Args = []string{"--var", "duration=" + h}
				case "results":
					j.Results = filepath.Join(dir, h)
				case "tickemu":
					j.Tickemu = filepath.Join(dir, "bin", h)
				case "image":
					j.Image = h
				case "claim":
					j.Claim = h
				}
				checkSlurm(t, j, dir, field, h)
				checkKubernetes(t, j, dir, field, h)
			})
		}
	}
}

// stub writes an executable that appends its arguments, one per line
// between brackets, to log.
func stub(t *testing.T, path, log, extra string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	body := "#!/bin/sh\nfor a in \"$@\"; do printf '[%s]\\n' \"$a\" >> " + syntaxQuote(log) + "; done\n" + extra
	if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
}

func syntaxQuote(s string) string { return shellQuote(s, syntax.LangPOSIX) }

func checkSlurm(t *testing.T, j Job, dir, field, h string) {
	script, err := Slurm(j)
	if err != nil {
		if !namesValue(err, h) && !strings.Contains(err.Error(), "#SBATCH") {
			t.Errorf("Slurm refused without naming the value: %v", err)
		}
		return
	}
	if field == "image" || field == "claim" {
		return // not in the Slurm script
	}
	// Outside Slurm: the script submits itself and the merge job; the
	// stand-in sbatch records its arguments and runs --wrap's string with
	// sh, as the merge job would.
	bin := filepath.Join(dir, "stubs")
	log := filepath.Join(dir, "sbatch.log")
	stub(t, filepath.Join(bin, "sbatch"), log, `for a in "$@"; do case "$a" in --wrap=*) sh -c "${a#--wrap=}";; esac; done
echo 42
`)
	tlog := filepath.Join(dir, "tickemu.log")
	stub(t, j.Tickemu, tlog, "")
	sfile := filepath.Join(dir, "job.sbatch")
	os.WriteFile(sfile, []byte(script), 0o644)
	run := func(env ...string) {
		cmd := exec.Command("bash", sfile)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), append(env, "PATH="+bin+":"+os.Getenv("PATH"))...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("bash job.sbatch %v: %v\n%s\n%s", env, err, out, script)
		}
	}
	run()
	run("SLURM_ARRAY_TASK_ID=1", "SLURM_CPUS_PER_TASK=1")
	if _, err := os.Stat(filepath.Join(dir, "PWNED")); err == nil {
		t.Fatalf("the Slurm script ran injected code:\n%s", script)
	}
	got, _ := os.ReadFile(tlog)
	if !strings.Contains(string(got), "["+j.File+"]") {
		t.Errorf("tickemu did not get the file %q intact:\n%s", j.File, got)
	}
	if field == "arg" && !strings.Contains(string(got), "[duration="+h+"]") {
		t.Errorf("tickemu did not get the --var value intact:\n%s", got)
	}
}

// namesValue reports whether err shows the hostile value h, quoted (so its
// control characters are escapes, not raw bytes).
func namesValue(err error, h string) bool {
	q := strconv.Quote(h)
	return strings.Contains(err.Error(), q[1:len(q)-1])
}

func checkKubernetes(t *testing.T, j Job, dir, field, h string) {
	if field != "image" && field != "claim" {
		j.File = "configs/" + filepath.Base(j.File)
		if field == "file" {
			j.File = "configs/" + h + ".hcl"
		}
		j.Results = "/results"
		if field == "results" {
			j.Results = "/results/" + h
		}
	}
	out, err := Kubernetes(j)
	if err != nil {
		if !namesValue(err, h) {
			t.Errorf("Kubernetes refused without naming the value: %v", err)
		}
		return
	}
	_, job, _ := manifestObjects(t, out)
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "kind: ") && line != "kind: ConfigMap" && line != "kind: Job" {
			t.Errorf("the manifest holds an object of %s", line)
		}
	}
	c := job.Spec.Template.Spec.Containers[0]
	if field == "image" && c.Image != h {
		t.Errorf("image %q, want %q", c.Image, h)
	}
	// The pod's command, run with a stand-in tickemu.
	bin := filepath.Join(dir, "k8sbin")
	tlog := filepath.Join(dir, "k8s-tickemu.log")
	name := filepath.Base(j.Tickemu)
	stub(t, filepath.Join(bin, name), tlog, "")
	res := filepath.Join(dir, "k8s-results")
	os.MkdirAll(res, 0o755)
	script := strings.ReplaceAll(c.Command[2], syntaxQuote(j.Results), syntaxQuote(res))
	script = strings.ReplaceAll(script, syntaxQuote(j.Tickemu), syntaxQuote(filepath.Join(bin, name)))
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "JOB_COMPLETION_INDEX=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("pod command: %v\n%s\n%s", err, b, script)
	}
	if _, err := os.Stat(filepath.Join(dir, "PWNED")); err == nil {
		t.Fatalf("the pod command ran injected code:\n%s", script)
	}
	if got, _ := os.ReadFile(tlog); field == "arg" && !strings.Contains(string(got), "[duration="+h+"]") {
		t.Errorf("tickemu did not get the --var value intact:\n%s", got)
	}
}

// TestSlurmShardStatus runs the script as array task 1 (under `sbatch
// SCRIPT` alone too: it makes the results directory) with a stand-in
// tickemu: a shard that succeeded or was stopped by SIGTERM (--time, 143:
// tickemu wrote its finished runs, marked incomplete) leaves shard-1.json
// for the merge, one that failed none; the script exits with tickemu's
// status. The resource flags become #SBATCH lines, and the merge job's
// options carry the memory, partition and account.
func TestSlurmShardStatus(t *testing.T) {
	for _, tc := range []struct {
		status int
		kept   bool
	}{{0, true}, {143, true}, {130, true}, {1, false}, {137, false}} {
		dir := t.TempDir()
		bin := filepath.Join(dir, "tickemu")
		os.WriteFile(bin, []byte(fmt.Sprintf("#!/bin/sh\necho '{}'\nexit %d\n", tc.status)), 0o755)
		j := testJob()
		j.Tickemu, j.File, j.Results = bin, "/shared/nohz.hcl", filepath.Join(dir, "results")
		j.Time, j.Mem, j.Partition, j.Account = "1-00:00:00", "4G", "batch", "kern"
		out, err := Slurm(j)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"#SBATCH --time=1-00:00:00\n", "#SBATCH --mem=4G\n", "#SBATCH --partition=batch\n", "#SBATCH --account=kern\n",
			`--dependency=afterany:"$array" --mem=4G --partition=batch --account=kern`} {
			if !strings.Contains(out, want) {
				t.Errorf("script lacks %q:\n%s", want, out)
			}
		}
		sfile := filepath.Join(dir, "job.sbatch")
		os.WriteFile(sfile, []byte(out), 0o755)
		cmd := exec.Command("bash", sfile)
		cmd.Env = append(os.Environ(), "SLURM_ARRAY_TASK_ID=1")
		code := 0
		if o, err := cmd.CombinedOutput(); err != nil {
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("%v\n%s", err, o)
			}
			code = ee.ExitCode()
		}
		_, err = os.Stat(filepath.Join(j.Results, "shard-1.json"))
		if code != tc.status || (err == nil) != tc.kept {
			t.Errorf("tickemu exiting %d: the task exits %d, shard-1.json %v; want %d, kept %v", tc.status, code, err, tc.status, tc.kept)
		}
	}
	j := testJob()
	j.Tickemu, j.File, j.Results = "/opt/tickemu", "/shared/nohz.hcl", "/shared/results"
	for _, bad := range []struct {
		f    func(*Job)
		want string
	}{
		{func(j *Job) { j.Time = "2h" }, "--time \"2h\""},
		{func(j *Job) { j.Mem = "4GB" }, "--mem \"4GB\""},
		{func(j *Job) { j.Partition = "a b" }, "--partition"},
		{func(j *Job) { j.Account = "$(x)" }, "--account"},
	} {
		k := j
		bad.f(&k)
		if _, err := Slurm(k); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("Slurm(%+v): error %v, want %q", k, err, bad.want)
		}
	}
}
