package cluster

import (
	"bytes"
	"fmt"
	"path"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"mvdan.cc/sh/v3/syntax"
	"sigs.k8s.io/yaml"
)

// MergeJobName names the merge Job of the Job name.
func MergeJobName(name string) string { return name + "-merge" }

// configDir is where the ConfigMap is mounted in the shards' pods.
const configDir = "/config"

// Kubernetes returns a manifest of three objects: a ConfigMap with the
// configuration file, an Indexed Job of Shards completions, and a merge
// Job. Pod I (JOB_COMPLETION_INDEX I-1) runs shard I and writes
// RESULTS/shard-I.json on the claim, or RESULTS/shard-I.failed with its
// exit status when it wrote none; a shard stopped by SIGTERM (the pod
// deleted, activeDeadlineSeconds) keeps its file, marked incomplete. A Job
// cannot wait for another, so the merge pod waits by itself until every
// shard has left one of the two, then writes RESULTS/compare.txt and
// compare.html, prints the comparison to its log and exits with merge's
// status (it names a failed or incomplete shard). Every pod runs as
// nobody (uid and gid 65534, fsGroup 65534 for the claim) without
// privileges, capabilities or a writable root (an emptyDir at /tmp), with
// Mem as its memory request and limit; every object is in Namespace when
// given.
func Kubernetes(j Job) (string, error) {
	if err := j.check(); err != nil {
		return "", err
	}
	if j.Image == "" || j.Claim == "" {
		return "", fmt.Errorf("the Kubernetes Job needs an image (--image) and a results claim (--claim)")
	}
	base := path.Base(j.File)
	if errs := validation.IsConfigMapKey(base); len(errs) > 0 {
		return "", fmt.Errorf("configuration file name %q cannot be a ConfigMap key: %s", base, errs[0])
	}
	for _, n := range []struct{ what, name string }{{"claim", j.Claim}} {
		if errs := validation.IsDNS1123Subdomain(n.name); len(errs) > 0 {
			return "", fmt.Errorf("%s %q is not a Kubernetes name: %s", n.what, n.name, errs[0])
		}
	}
	file := path.Join(configDir, base)
	compare := append([]string{j.Tickemu, "compare", file}, j.Args...)
	sh := func(args ...string) string { return shellJoin(args, syntax.LangPOSIX) }
	q := func(s string) string { return shellQuote(s, syntax.LangPOSIX) }
	// 0, or 129/130/143 (SIGHUP, SIGINT, SIGTERM: tickemu wrote the runs
	// that finished, marked incomplete): the file is kept for the merge.
	// The shell runs tickemu in the background so that, as PID 1, it passes
	// the pod's SIGTERM on and waits for the file.
	script := fmt.Sprintf(`set -u
i=$((JOB_COMPLETION_INDEX + 1))
%s --jobs %d --shard "$i/%d" > %s/shard-"$i".json.tmp &
pid=$!
trap 'kill -TERM "$pid" 2>/dev/null' TERM
status=0
wait "$pid" || status=$?
if kill -0 "$pid" 2>/dev/null; then status=0; wait "$pid" || status=$?; fi
case "$status" in
0 | 129 | 130 | 143) mv %s/shard-"$i".json.tmp %s/shard-"$i".json ;;
*) echo "$status" > %s/shard-"$i".failed ;;
esac
exit "$status"`,
		sh(compare...), j.CPUs, j.Shards, q(j.Results), q(j.Results), q(j.Results), q(j.Results))
	labels := map[string]string{"app.kubernetes.io/name": "tickemu", "app.kubernetes.io/instance": j.Name}
	cm := corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: j.Name + "-config", Namespace: j.Namespace, Labels: labels},
		Data:       map[string]string{base: string(j.Config)}}
	configVol := corev1.Volume{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name}}}}
	resultsVol := corev1.Volume{Name: "results", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
		ClaimName: j.Claim}}}
	tmpVol := corev1.Volume{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
	mem, err := kubernetesMemory(j.Mem)
	if err != nil {
		return "", err
	}
	resources := func(cpus int) corev1.ResourceRequirements {
		r := corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(strconv.Itoa(cpus))}}
		if mem != nil {
			r.Requests[corev1.ResourceMemory] = *mem
			r.Limits = corev1.ResourceList{corev1.ResourceMemory: *mem}
		}
		return r
	}
	tmpMount := corev1.VolumeMount{Name: "tmp", MountPath: "/tmp"}
	job := indexedJob(j.Name, j.Namespace, labels, batchv1.IndexedCompletion, j.Shards, corev1.Container{
		Name: "shard", Image: j.Image, Command: []string{"/bin/sh", "-c", script}, Resources: resources(j.CPUs),
		VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: configDir, ReadOnly: true}, {Name: "results", MountPath: j.Results}, tmpMount},
	}, configVol, resultsVol, tmpVol)
	txt := path.Join(j.Results, "compare.txt")
	// The merge waits for a file of every shard, then merges them; its
	// status is merge's (1: a run failed or a shard is incomplete), and the
	// log shows the comparison either way.
	var wait strings.Builder
	for i := 1; i <= j.Shards; i++ {
		fmt.Fprintf(&wait, " %d", i)
	}
	mergeScript := fmt.Sprintf(`set +e
for i in%s; do
	until [ -e %s/shard-"$i".json ] || [ -e %s/shard-"$i".failed ]; do
		echo "tickemu merge: waiting for shard $i of %d" >&2
		sleep 30
	done
	if [ -e %s/shard-"$i".failed ]; then
		echo "tickemu merge: shard $i of %d failed (exit status $(cat %s/shard-"$i".failed)): see its pod's log" >&2
	fi
done
%s > %s
status=$?
cat %s
exit $status`, wait.String(), q(j.Results), q(j.Results), j.Shards, q(j.Results), j.Shards, q(j.Results),
		sh(append([]string{j.Tickemu}, j.MergeArgs(j.Results)...)...), q(txt), q(txt))
	merge := indexedJob(MergeJobName(j.Name), j.Namespace, labels, batchv1.NonIndexedCompletion, 1, corev1.Container{
		Name: "merge", Image: j.Image, Command: []string{"/bin/sh", "-c", mergeScript}, Resources: resources(1),
		VolumeMounts: []corev1.VolumeMount{{Name: "results", MountPath: j.Results}, tmpMount},
	}, resultsVol, tmpVol)
	ns := ""
	if j.Namespace != "" {
		ns = " -n " + j.Namespace
	}
	var b bytes.Buffer
	// The comment carries only values that passed checkValues (no
	// newline), each quoted: it cannot end early.
	fmt.Fprintf(&b, `# Generated by tickemu compare --emit k8s: %s as a Kubernetes Indexed Job
# of %d shards (pod I writes %s/shard-I.json on the claim %s) and a merge
# Job that waits for every shard, writes %s and %s/compare.html
# and prints the comparison:
#
#   kubectl%s apply -f THIS_FILE
#   kubectl%s wait --for=condition=complete --timeout=24h job/%s
#   kubectl%s logs job/%s
#
# The claim %s must exist and be ReadWriteMany (every shard pod and the
# merge mount it at once, on any node), writable by uid/gid 65534 (the pods
# run as nobody; fsGroup 65534 makes most volume types so).
`, sh(compare...), j.Shards, q(j.Results), j.Claim, q(txt), q(j.Results), ns, ns, merge.Name, ns, merge.Name, j.Claim)
	// Each object through the API types' own JSON field names
	// (sigs.k8s.io/yaml marshals through encoding/json and the types' tags).
	for i, obj := range []any{cm, job, merge} {
		doc, err := yaml.Marshal(obj)
		if err != nil {
			return "", err
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		b.Write(doc)
	}
	return b.String(), nil
}

// kubernetesMemory is Slurm's --mem size (4G: K, M, G, T in powers of 1024,
// M without a unit) as a Kubernetes quantity (4Gi); nil for none.
func kubernetesMemory(mem string) (*resource.Quantity, error) {
	if mem == "" {
		return nil, nil
	}
	n, unit := mem, "M"
	if last := mem[len(mem)-1]; last < '0' || last > '9' {
		n, unit = mem[:len(mem)-1], string(last)
	}
	q, err := resource.ParseQuantity(n + unit + "i")
	if err != nil {
		return nil, fmt.Errorf("--mem %q: %v", mem, err)
	}
	return &q, nil
}

// indexedJob is a batch/v1 Job of one container: completions pods in the
// given completion mode, none retried (a shard is deterministic: running
// it again gives the same failure), run as nobody without privileges.
func indexedJob(name, namespace string, labels map[string]string, mode batchv1.CompletionMode, completions int,
	c corev1.Container, vols ...corev1.Volume) batchv1.Job {
	n := int32(completions)
	var backoff int32
	nobody := int64(65534)
	yes, no := true, false
	c.SecurityContext = &corev1.SecurityContext{AllowPrivilegeEscalation: &no, ReadOnlyRootFilesystem: &yes,
		Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
	pod := corev1.PodSecurityContext{RunAsNonRoot: &yes, RunAsUser: &nobody, RunAsGroup: &nobody, FSGroup: &nobody,
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
	return batchv1.Job{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels},
		Spec: batchv1.JobSpec{CompletionMode: &mode, Completions: &n, Parallelism: &n, BackoffLimit: &backoff,
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, SecurityContext: &pod,
					Containers: []corev1.Container{c}, Volumes: vols}}}}
}
