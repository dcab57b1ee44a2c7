package custombuild

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/printer"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
)

// sdkPackage is the import path of the package that declares sdk.Factory.
const sdkPackage = TickemuModule + "/framework/sdk"

// checkFactories checks that the Go package in dir (a plugin module's root)
// declares func Factories() []sdk.Factory, the one function the generated
// main calls, so that a missing or wrong declaration is named in the
// plugin's own file instead of as a compile error in generated code.
func checkFactories(module, dir string) error {
	pkg, err := build.ImportDir(dir, 0)
	if err != nil {
		return fmt.Errorf("--with %s: %s: %w", module, dir, err)
	}
	fset := token.NewFileSet()
	for _, name := range pkg.GoFiles {
		path := filepath.Join(dir, name)
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return fmt.Errorf("--with %s: %w", module, err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || fd.Name.Name != "Factories" {
				continue
			}
			if fd.Type.TypeParams == nil && fd.Type.Params.NumFields() == 0 && fd.Type.Results.NumFields() == 1 &&
				isSDKFactorySlice(f, fd.Type.Results.List[0].Type) {
				return nil
			}
			return fmt.Errorf("--with %s: %s: Factories is declared as %s; %w (docs/plugins.md)",
				module, fset.Position(fd.Pos()), funcText(fset, fd), ErrNoFactories)
		}
	}
	return fmt.Errorf("--with %s: the package in %s declares no Factories function; %w (docs/plugins.md)", module, dir, ErrNoFactories)
}

// isSDKFactorySlice reports whether e, in file f, is []X.Factory with X an
// import of framework/sdk.
func isSDKFactorySlice(f *ast.File, e ast.Expr) bool {
	at, ok := e.(*ast.ArrayType)
	if !ok || at.Len != nil {
		return false
	}
	sel, ok := at.Elt.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Factory" {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	if !ok {
		return false
	}
	for _, im := range f.Imports {
		path, err := strconv.Unquote(im.Path.Value)
		if err != nil || path != sdkPackage {
			continue
		}
		name := "sdk"
		if im.Name != nil {
			name = im.Name.Name
		}
		if name == x.Name {
			return true
		}
	}
	return false
}

// funcText is fd's signature as written, without its body.
func funcText(fset *token.FileSet, fd *ast.FuncDecl) string {
	body := fd.Body
	fd.Body = nil
	defer func() { fd.Body = body }()
	var b strings.Builder
	if err := printer.Fprint(&b, fset, fd); err != nil {
		return "func Factories(...)"
	}
	return b.String()
}
