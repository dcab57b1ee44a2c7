package config

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/tickemu/tickemu/framework/sdk"
)

// Diagnostics converts a plugin's diagnostics (from Configure) into HCL ones
// pointing into this block: at the named attribute's value, at the plugin
// attribute, or at the block header when no attribute is named or it is not
// written (a default the plugin rejected).
func (p PluginBlock) Diagnostics(ds sdk.Diagnostics) hcl.Diagnostics {
	out := make(hcl.Diagnostics, 0, len(ds))
	for _, d := range ds {
		r := p.DefRange
		switch d.Attribute {
		case "":
		case "plugin":
			r = p.PluginRange
		default:
			if ar, ok := attributeRange(p.Body, d.Attribute); ok {
				r = ar
			}
		}
		out = append(out, pluginDiag(d, r, p.What()))
	}
	return out
}

// AttributeRange returns the source range of attribute name's value in body, or
// body.MissingItemRange() when the body does not set it.
func AttributeRange(body hcl.Body, name string) hcl.Range {
	if r, ok := attributeRange(body, name); ok {
		return r
	}
	return body.MissingItemRange()
}

// PluginDiagnostics converts a plugin's diagnostics into HCL ones pointing at
// the attributes they name in body (see AttributeRange). PluginBlock.Diagnostics
// does better for plugin blocks: it points block-level complaints at the header.
func PluginDiagnostics(body hcl.Body, ds sdk.Diagnostics) hcl.Diagnostics {
	out := make(hcl.Diagnostics, 0, len(ds))
	for _, d := range ds {
		r := body.MissingItemRange()
		if d.Attribute != "" {
			r = AttributeRange(body, d.Attribute)
		}
		out = append(out, pluginDiag(d, r, ""))
	}
	return out
}

func pluginDiag(d sdk.Diagnostic, r hcl.Range, what string) *hcl.Diagnostic {
	sev := hcl.DiagError
	if d.Severity == sdk.SeverityWarning {
		sev = hcl.DiagWarning
	}
	detail := d.Detail
	if d.Attribute != "" {
		detail = strings.TrimSpace(fmt.Sprintf("Attribute %q. %s", d.Attribute, detail))
	}
	if what != "" {
		detail = strings.TrimSpace(fmt.Sprintf("In the %s: %s", what, detail))
	}
	return &hcl.Diagnostic{Severity: sev, Summary: d.Summary, Detail: detail, Subject: r.Ptr()}
}

func attributeRange(body hcl.Body, name string) (hcl.Range, bool) {
	if body == nil {
		return hcl.Range{}, false
	}
	c, _, _ := body.PartialContent(&hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: name}}})
	if a, ok := c.Attributes[name]; ok {
		return a.Expr.Range(), true
	}
	return hcl.Range{}, false
}

// pluginHostAttrs are the attributes the host takes from every plugin block.
