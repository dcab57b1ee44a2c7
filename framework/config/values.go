package config

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
)

// Attribute types the host adds to sdk's for the schemas it declares itself
// (machine, run, kernel, workloads). A plugin may use them too: sdk.AttrType is
// a string and the host decodes whatever type name it knows.
const (
	// TypeInteger is a whole number from -2^63 to 2^64-1 (so a uint64 seed
	// fits), in canonical form as a decimal integer.
	TypeInteger sdk.AttrType = "integer"
	// TypeCPUList is a set of CPUs: a list of numbers ([4, 5]), one number, or
	// a kernel cpulist string ("4-7,10"). Canonical form is FormatCPUList's.
	TypeCPUList sdk.AttrType = "cpulist"
)

func (d decoder) canonical(val cty.Value, a sdk.Attribute) (string, error) {
	v, err := d.convert(val, a)
	if err != nil {
		return "", err
	}
	if len(a.OneOf) > 0 && !containsString(a.OneOf, v) {
		return "", fmt.Errorf("%q is not one of %s.%s", v, quoteList(a.OneOf), didYouMean(v, a.OneOf))
	}
	if err := d.checkBounds(v, a, val); err != nil {
		return "", err
	}
	return v, nil
}

// checkBounds compares a canonical number, duration or frequency with the
// schema's Min and Max. written is the value as given, for the message.
func (d decoder) checkBounds(v string, a sdk.Attribute, written cty.Value) error {
	if a.Min == "" && a.Max == "" {
		return nil
	}
	x, ok := new(big.Float).SetString(v)
	if !ok {
		return fmt.Errorf("the schema bounds %q, which is not a number (a bug in whatever declared the schema)", a.Name)
	}
	for _, b := range []struct {
		text string
		max  bool
	}{{a.Min, false}, {a.Max, true}} {
		if b.text == "" {
			continue
		}
		bound, err := d.bound(a, b.text)
		if err != nil {
			return fmt.Errorf("the schema's bound %q: %v (a bug in whatever declared the schema)", b.text, err)
		}
		if c := x.Cmp(bound); b.max && c > 0 {
			return fmt.Errorf("%s is more than %s, the most allowed%s", writtenText(written), b.text, rangeHint(a))
		} else if !b.max && c < 0 {
			return fmt.Errorf("%s is less than %s, the least allowed%s", writtenText(written), b.text, rangeHint(a))
		}
	}
	return nil
}

// bound converts a schema bound to a number in canonical units.
func (d decoder) bound(a sdk.Attribute, text string) (*big.Float, error) {
	val, err := sourceValue(a.Type, text)
	if err != nil {
		return nil, err
	}
	unbounded := a
	unbounded.Min, unbounded.Max, unbounded.OneOf = "", "", nil
	v, err := d.convert(val, unbounded)
	if err != nil {
		return nil, err
	}
	f, ok := new(big.Float).SetString(v)
	if !ok {
		return nil, fmt.Errorf("not a number")
	}
	return f, nil
}

func rangeHint(a sdk.Attribute) string {
	switch {
	case a.Min != "" && a.Max != "":
		return fmt.Sprintf(" (%s takes %s to %s)", a.Name, a.Min, a.Max)
	case a.Max != "":
		return fmt.Sprintf(" (%s takes at most %s)", a.Name, a.Max)
	}
	return fmt.Sprintf(" (%s takes at least %s)", a.Name, a.Min)
}

func writtenText(v cty.Value) string {
	switch {
	case v.Type() == cty.Number:
		return v.AsBigFloat().Text('g', 10)
	case v.Type() == cty.String:
		return strconv.Quote(v.AsString())
	}
	return v.Type().FriendlyName()
}

func (d decoder) convert(val cty.Value, a sdk.Attribute) (string, error) {
	switch a.Type {
	case sdk.TypeString:
		s, err := convert.Convert(val, cty.String)
		if err != nil {
			return "", fmt.Errorf("a string is required, got %s", val.Type().FriendlyName())
		}
		return s.AsString(), nil
	case sdk.TypeBool:
		b, err := convert.Convert(val, cty.Bool)
		if err != nil {
			return "", fmt.Errorf("true or false is required, got %s", describe(val))
		}
		return strconv.FormatBool(b.True()), nil
	case sdk.TypeNumber:
		f, err := toBigFloat(val)
		if err != nil {
			return "", err
		}
		x, _ := f.Float64()
		if math.IsInf(x, 0) {
			return "", fmt.Errorf("%s is too large", f.Text('g', 10))
		}
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	case TypeInteger:
		f, err := toBigFloat(val)
		if err != nil {
			return "", err
		}
		i, err := wholeNumber(f)
		if err != nil {
			return "", err
		}
		return i.String(), nil
	case sdk.TypeDuration:
		s, err := unitString(val, "duration", "us")
		if err != nil {
			return "", err
		}
		ns, err := ktime.ParseDuration(s)
		if err != nil {
			return "", unitError(err)
		}
		return strconv.FormatInt(ns, 10), nil
	case sdk.TypeFrequency:
		s, err := unitString(val, "frequency", "MHz")
		if err != nil {
			return "", err
		}
		hz, err := ktime.ParseFrequency(s)
		if err != nil {
			return "", unitError(err)
		}
		return strconv.FormatFloat(hz, 'g', -1, 64), nil
	case TypeCPUList:
		cpus, err := d.cpuList(val)
		if err != nil {
			return "", err
		}
		return FormatCPUList(cpus), nil
	}
	return "", fmt.Errorf("the schema declares unknown type %q", a.Type)
}

// cpuList reads a list of CPU numbers, one number, or a cpulist string.
func (d decoder) cpuList(val cty.Value) ([]int, error) {
	bound, dynamic := d.nrCPUs, true
	if bound <= 0 {
		bound, dynamic = MaxCPUs, false
	}
	ty := val.Type()
	switch {
	case ty == cty.String:
		if dynamic {
			return ParseCPUListFor(val.AsString(), bound)
		}
		return ParseCPUList(val.AsString())
	case ty == cty.Number:
		c, err := cpuNumber(val, bound)
		if err != nil {
			return nil, err
		}
		return []int{c}, nil
	case ty.IsListType() || ty.IsTupleType() || ty.IsSetType():
		var cpus []int
		for it := val.ElementIterator(); it.Next(); {
			_, ev := it.Element()
			if ev.IsNull() {
				return nil, fmt.Errorf("a CPU list must not hold null")
			}
			n, err := convert.Convert(ev, cty.Number)
			if err != nil {
				return nil, fmt.Errorf("a CPU list holds CPU numbers, got %s", ev.Type().FriendlyName())
			}
			c, err := cpuNumber(n, bound)
			if err != nil {
				return nil, err
			}
			cpus = append(cpus, c)
		}
		return cpus, nil
	}
	return nil, fmt.Errorf("a CPU list ([4, 5] or \"4-5\") is required, got %s", ty.FriendlyName())
}

func cpuNumber(val cty.Value, nrCPUs int) (int, error) {
	i, err := wholeNumber(val.AsBigFloat())
	if err != nil {
		return 0, err
	}
	if i.Sign() < 0 || !i.IsInt64() || i.Int64() >= int64(nrCPUs) {
		return 0, fmt.Errorf("%w: CPU %s does not exist (CPUs are 0-%d)", ErrCPUListRange, i, nrCPUs-1)
	}
	return int(i.Int64()), nil
}

var (
	minInteger = new(big.Int).SetInt64(math.MinInt64)
	maxInteger = new(big.Int).SetUint64(math.MaxUint64)
)

func wholeNumber(f *big.Float) (*big.Int, error) {
	if hugeNumber(f) {
		return nil, errNumberRange
	}
	if f.IsInf() || !f.IsInt() {
		return nil, fmt.Errorf("a whole number is required, got %s", f.Text('g', 10))
	}
	i, _ := f.Int(nil)
	if i.Cmp(minInteger) < 0 || i.Cmp(maxInteger) > 0 {
		// As a float: hz = 1e400 was echoed with its 401 digits.
		return nil, fmt.Errorf("%s is out of range (a whole number from %d to %d)", f.Text('g', 10), int64(math.MinInt64), uint64(math.MaxUint64))
	}
	return i, nil
}

func toBigFloat(val cty.Value) (*big.Float, error) {
	n, err := convert.Convert(val, cty.Number)
	if err != nil {
		return nil, fmt.Errorf("a number is required, got %s", describe(val))
	}
	// A string such as "1e99999999" converts without passing evalExpr's check.
	if f := n.AsBigFloat(); !hugeNumber(f) {
		return f, nil
	}
	return nil, errNumberRange
}

var errNumberRange = fmt.Errorf("numbers must lie between 1e-1233 and 1e1233 in magnitude (or be 0)")

// unitString insists on a string: a bare number has no unit, and guessing one
// would silently change an experiment.
func unitString(val cty.Value, kind, unit string) (string, error) {
	if val.Type() == cty.Number {
		return "", fmt.Errorf("a %s needs a unit: write it as a string, e.g. \"%s%s\"", kind, val.AsBigFloat().Text('g', -1), unit)
	}
	if val.Type() != cty.String {
		return "", fmt.Errorf("a %s is a string with a unit, got %s", kind, val.Type().FriendlyName())
	}
	return val.AsString(), nil
}

// unitError drops ktime's package prefix: the diagnostic already says where.
func unitError(err error) error {
	return fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "ktime: "))
}

func describe(val cty.Value) string {
	if val.Type() == cty.String {
		return strconv.Quote(val.AsString())
	}
	return val.Type().FriendlyName()
}

func valueError(attr *hcl.Attribute, name, what, msg string) *hcl.Diagnostic {
	in := ""
	if what != "" {
		in = " in the " + what
	}
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  fmt.Sprintf("Invalid value for %q", name),
		Detail:   fmt.Sprintf("%q%s: %s", name, in, sentence(msg)),
		Subject:  attr.Expr.Range().Ptr(),
		Context:  attr.Range.Ptr(),
	}
}

// sentence ends msg with a full stop unless it has one.
func sentence(msg string) string {
	if strings.HasSuffix(msg, ".") || strings.HasSuffix(msg, "?") {
		return msg
	}
	return msg + "."
}
