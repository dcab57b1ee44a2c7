package cluster

import (
	"bytes"
	"fmt"
	"path"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// The manifest's objects, as the Kubernetes API (batch/v1 Job, v1
// ConfigMap) spells them; only the fields the job sets.
type (
	// Meta is an object's metadata.
	Meta struct {
		Name   string            `yaml:"name,omitempty"`
		Labels map[string]string `yaml:"labels,omitempty"`
	}
	// ConfigMap holds the configuration file.
	ConfigMap struct {
		APIVersion string            `yaml:"apiVersion"`
		Kind       string            `yaml:"kind"`
		Metadata   Meta              `yaml:"metadata"`
		Data       map[string]string `yaml:"data"`
	}
	// IndexedJob is a batch/v1 Job with completionMode Indexed.
	IndexedJob struct {
		APIVersion string  `yaml:"apiVersion"`
		Kind       string  `yaml:"kind"`
		Metadata   Meta    `yaml:"metadata"`
		Spec       JobSpec `yaml:"spec"`
	}
	JobSpec struct {
		CompletionMode string `yaml:"completionMode"`
		Completions    int    `yaml:"completions"`
		Parallelism    int    `yaml:"parallelism"`
		BackoffLimit   int    `yaml:"backoffLimit"`
		// Suspend holds the merge Job until the shards are done.
		Suspend  bool        `yaml:"suspend,omitempty"`
		Template PodTemplate `yaml:"template"`
	}
	PodTemplate struct {
		Metadata Meta    `yaml:"metadata"`
		Spec     PodSpec `yaml:"spec"`
	}
	PodSpec struct {
		RestartPolicy string      `yaml:"restartPolicy"`
		Containers    []Container `yaml:"containers"`
		Volumes       []Volume    `yaml:"volumes"`
	}
	Container struct {
		Name         string        `yaml:"name"`
		Image        string        `yaml:"image"`
		Command      []string      `yaml:"command"`
		Resources    Resources     `yaml:"resources"`
		VolumeMounts []VolumeMount `yaml:"volumeMounts"`
	}
	Resources struct {
		Requests map[string]string `yaml:"requests"`
	}
	VolumeMount struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
		ReadOnly  bool   `yaml:"readOnly,omitempty"`
	}
	Volume struct {
		Name                  string        `yaml:"name"`
		ConfigMap             *ConfigMapRef `yaml:"configMap,omitempty"`
		PersistentVolumeClaim *ClaimRef     `yaml:"persistentVolumeClaim,omitempty"`
	}
	ConfigMapRef struct {
		Name string `yaml:"name"`
	}
	ClaimRef struct {
		ClaimName string `yaml:"claimName"`
	}
)

// MergeJobName names the merge Job of the Job name.
func MergeJobName(name string) string { return name + "-merge" }

// configDir is where the ConfigMap is mounted in the shards' pods.
const configDir = "/config"

// Kubernetes returns a manifest of three objects: a ConfigMap with the
// configuration file, an Indexed Job of Shards completions, and a suspended
// merge Job. Pod I (JOB_COMPLETION_INDEX I-1) runs shard I and writes
// RESULTS/shard-I.json on the claim. A Job cannot wait for another, so the
// merge Job is created suspended and resumed once the shards' Job is
// complete (the manifest's comment gives the kubectl commands); it writes
// RESULTS/compare.txt and compare.html and prints the comparison to its log.
func Kubernetes(j Job) (string, error) {
	if err := j.check(); err != nil {
		return "", err
	}
	if j.Image == "" || j.Claim == "" {
		return "", fmt.Errorf("the Kubernetes Job needs an image (--image) and a results claim (--claim)")
	}
	base := path.Base(j.File)
	file := path.Join(configDir, base)
	compare := append([]string{j.Tickemu, "compare", file}, j.Args...)
	script := fmt.Sprintf(`set -eu
i=$((JOB_COMPLETION_INDEX + 1))
%s --jobs %d --shard "$i/%d" > %s/shard-"$i".json.tmp
mv %s/shard-"$i".json.tmp %s/shard-"$i".json`,
		shellJoin(compare), j.CPUs, j.Shards, shellQuote(j.Results), shellQuote(j.Results), shellQuote(j.Results))
	labels := map[string]string{"app.kubernetes.io/name": "tickemu", "app.kubernetes.io/instance": j.Name}
	cm := ConfigMap{APIVersion: "v1", Kind: "ConfigMap", Metadata: Meta{Name: j.Name + "-config", Labels: labels},
		Data: map[string]string{base: string(j.Config)}}
	job := IndexedJob{APIVersion: "batch/v1", Kind: "Job", Metadata: Meta{Name: j.Name, Labels: labels},
		Spec: JobSpec{CompletionMode: "Indexed", Completions: j.Shards, Parallelism: j.Shards,
			// A shard is deterministic: running it again gives the same failure.
			BackoffLimit: 0,
			Template: PodTemplate{Metadata: Meta{Labels: labels}, Spec: PodSpec{RestartPolicy: "Never",
				Containers: []Container{{Name: "shard", Image: j.Image, Command: []string{"/bin/sh", "-c", script},
					Resources:    Resources{Requests: map[string]string{"cpu": strconv.Itoa(j.CPUs)}},
					VolumeMounts: []VolumeMount{{Name: "config", MountPath: configDir, ReadOnly: true}, {Name: "results", MountPath: j.Results}}}},
				Volumes: []Volume{{Name: "config", ConfigMap: &ConfigMapRef{Name: cm.Metadata.Name}},
					{Name: "results", PersistentVolumeClaim: &ClaimRef{ClaimName: j.Claim}}}}}}}
	txt := path.Join(j.Results, "compare.txt")
	// The merge's status is compare's (1: a run failed); the log shows the
	// comparison either way.
	mergeScript := fmt.Sprintf("set +e\n%s > %s\nstatus=$?\ncat %s\nexit $status",
		shellJoin(append([]string{j.Tickemu}, j.MergeArgs(j.Results)...)), shellQuote(txt), shellQuote(txt))
	merge := IndexedJob{APIVersion: "batch/v1", Kind: "Job", Metadata: Meta{Name: MergeJobName(j.Name), Labels: labels},
		Spec: JobSpec{CompletionMode: "NonIndexed", Completions: 1, Parallelism: 1, BackoffLimit: 0, Suspend: true,
			Template: PodTemplate{Metadata: Meta{Labels: labels}, Spec: PodSpec{RestartPolicy: "Never",
				Containers: []Container{{Name: "merge", Image: j.Image, Command: []string{"/bin/sh", "-c", mergeScript},
					Resources:    Resources{Requests: map[string]string{"cpu": "1"}},
					VolumeMounts: []VolumeMount{{Name: "results", MountPath: j.Results}}}},
				Volumes: []Volume{{Name: "results", PersistentVolumeClaim: &ClaimRef{ClaimName: j.Claim}}}}}}}
	var b bytes.Buffer
	fmt.Fprintf(&b, `# Generated by tickemu compare --emit k8s: %s as a Kubernetes Indexed Job
# of %d shards (pod I writes %s/shard-I.json on the claim %s) and a merge
# Job, created suspended, that writes %s and %s/compare.html
# and prints the comparison:
#
#   kubectl apply -f THIS_FILE
#   kubectl wait --for=condition=complete --timeout=24h job/%s
#   kubectl patch job/%s --type=merge -p '{"spec":{"suspend":false}}'
#   kubectl wait --for=condition=complete --timeout=1h job/%s
#   kubectl logs job/%s
`, shellJoin(compare), j.Shards, j.Results, j.Claim, txt, j.Results, j.Name, merge.Metadata.Name, merge.Metadata.Name, merge.Metadata.Name)
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	for _, obj := range []any{cm, job, merge} {
		if err := enc.Encode(obj); err != nil {
			return "", err
		}
	}
	if err := enc.Close(); err != nil {
		return "", err
	}
	return b.String(), nil
}
