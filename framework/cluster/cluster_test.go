package cluster

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
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
	dec := yaml.NewDecoder(strings.NewReader(out))
	dec.KnownFields(true)
	var cm ConfigMap
	var job, merge IndexedJob
	if err := dec.Decode(&cm); err != nil {
		t.Fatalf("first document: %v\n%s", err, out)
	}
	if err := dec.Decode(&job); err != nil {
		t.Fatalf("second document: %v\n%s", err, out)
	}
	if err := dec.Decode(&merge); err != nil {
		t.Fatalf("third document: %v\n%s", err, out)
	}
	var extra any
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		t.Errorf("a fourth document: %v", err)
	}
	// The same documents as plain maps: the fields the API requires.
	var docs []map[string]any
	d2 := yaml.NewDecoder(strings.NewReader(out))
	for {
		var m map[string]any
		if err := d2.Decode(&m); err != nil {
			break
		}
		docs = append(docs, m)
	}
	for _, m := range docs {
		for _, k := range []string{"apiVersion", "kind", "metadata"} {
			if _, ok := m[k]; !ok {
				t.Errorf("%v: no %s", m["kind"], k)
			}
		}
	}
	if cm.APIVersion != "v1" || cm.Kind != "ConfigMap" || cm.Data["nohz-catchup.hcl"] != string(j.Config) {
		t.Errorf("ConfigMap = %+v", cm)
	}
	s := job.Spec
	if job.APIVersion != "batch/v1" || job.Kind != "Job" || job.Metadata.Name != j.Name {
		t.Errorf("job header = %s %s %s", job.APIVersion, job.Kind, job.Metadata.Name)
	}
	if s.CompletionMode != "Indexed" || s.Completions != 4 || s.Parallelism != 4 || s.BackoffLimit != 0 {
		t.Errorf("job spec = %+v", s)
	}
	ps := s.Template.Spec
	if ps.RestartPolicy != "Never" || len(ps.Containers) != 1 {
		t.Fatalf("pod spec = %+v", ps)
	}
	c := ps.Containers[0]
	if c.Image != j.Image || c.Resources.Requests["cpu"] != "2" || len(c.Command) != 3 || c.Command[0] != "/bin/sh" {
		t.Errorf("container = %+v", c)
	}
	vols := map[string]Volume{}
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
			if v.ConfigMap == nil || v.ConfigMap.Name != cm.Metadata.Name {
				t.Errorf("the config mount is %+v, not the ConfigMap %s", v, cm.Metadata.Name)
			}
		case j.Results:
			if v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != "runs" {
				t.Errorf("the results mount is %+v, not the claim", v)
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

	// The merge Job waits (suspended) and, resumed, merges every shard into
	// compare.txt and compare.html, prints the comparison and exits with
	// the merge's status.
	ms := merge.Spec
	if merge.Metadata.Name != MergeJobName(j.Name) || !ms.Suspend || ms.Completions != 1 || ms.BackoffLimit != 0 {
		t.Errorf("merge Job %s spec %+v", merge.Metadata.Name, ms)
	}
	mc := ms.Template.Spec.Containers[0]
	if len(ms.Template.Spec.Volumes) != 1 || ms.Template.Spec.Volumes[0].PersistentVolumeClaim == nil || mc.VolumeMounts[0].MountPath != j.Results {
		t.Errorf("the merge pod does not mount the claim at %s: %+v", j.Results, ms.Template.Spec)
	}
	os.WriteFile(bin, []byte("#!/bin/sh\nfor a in \"$@\"; do printf '[%s]' \"$a\"; done\nexit 1\n"), 0o755)
	cmd = exec.Command("/bin/sh", "-c", strings.ReplaceAll(mc.Command[2], j.Results, dir))
	cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"))
	logged, err := cmd.Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("merge pod: %v, want the merge's exit status 1", err)
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
	for _, want := range []string{"#SBATCH --array=1-4\n", "#SBATCH --cpus-per-task=2\n", "#SBATCH --output=/shared/results/shard-%a.log\n",
		"--dependency=afterok:\"$array\"", `/opt/tickemu compare '/shared/nohz catchup.hcl' --seeds 20 --sweep hz=100,250 --var 'duration=it'\''s 2s' --jobs`,
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
	b.WriteString(shellJoin([]string{"a b", "it's", "plain/x=1"}))
	if b.String() != `'a b' 'it'\''s' plain/x=1` {
		t.Errorf("shellJoin = %s", b.String())
	}
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
	if ms := merge.Spec; merge.Name != MergeJobName(j.Name) || ms.Suspend == nil || !*ms.Suspend ||
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
	if ps.RestartPolicy != corev1.RestartPolicyNever || len(ps.Containers) != 1 || len(ps.Volumes) != 2 {
		t.Fatalf("pod spec %+v", ps)
	}
	c := ps.Containers[0]
	if cpu := c.Resources.Requests[corev1.ResourceCPU]; cpu.String() != "2" {
		t.Errorf("cpu request %s, want 2", cpu.String())
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
