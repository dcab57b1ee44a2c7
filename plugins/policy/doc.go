// Package policy holds tickemu's builtin policy plugins (sdk.PolicyKinds):
// the strategies the hrtimer and wheel plugins used to keep as string
// attributes, one small plugin each, named as those attributes' values.
//
//	hang_policy     proportional, fixed_100ms, max_hang_time  (hrtimer hang_delay)
//	catchup_policy  per_jiffy, skip_empty, next_expiry        (wheel catchup)
//	restart_policy  double, deferred                          (hrtimer restart)
//
// The base plugins ask these directly for the builtin their attribute
// names (eras select it per kernel release); a policy block puts any
// plugin of the kind, builtin or not, in its place. Each is stateless
// apart from its decision count, so the same value may serve every CPU.
package policy
