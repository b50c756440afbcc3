// Command doccheck fails when an exported name of a package has no doc comment that starts with
// that name (as go doc and the Go style guide expect): every exported function, method of an
// exported type, type, constant and variable, outside test files. A constant or variable in a
// parenthesized group may share the group's comment instead. bindings/go/docs.sh runs it on
// packages cairn and cairn/ops before writing their reference.
//
//	go run ./internal/doccheck DIR...
//
// It prints one line per problem, file:line: message, and exits 1 when there is any.
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: doccheck DIR...")
		os.Exit(2)
	}
	var problems []string
	for _, dir := range os.Args[1:] {
		p, err := checkDir(dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "doccheck:", err)
			os.Exit(2)
		}
		problems = append(problems, p...)
	}
	sort.Strings(problems)
	for _, p := range problems {
		fmt.Println(p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(os.Stderr, "doccheck: %d exported names without a doc comment that starts with the name\n", len(problems))
		os.Exit(1)
	}
}

// checkDir checks the non-test Go files of one package directory.
func checkDir(dir string) ([]string, error) {
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var problems []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		problems = append(problems, checkFile(fset, f)...)
	}
	return problems, nil
}

func checkFile(fset *token.FileSet, f *ast.File) []string {
	var problems []string
	report := func(pos token.Pos, kind, name string, doc *ast.CommentGroup) {
		if !startsWithName(doc, name) {
			what := "has no doc comment"
			if doc != nil {
				what = fmt.Sprintf("has a doc comment that does not start with %q", name)
			}
			problems = append(problems, fmt.Sprintf("%s: %s %s %s", fset.Position(pos), kind, name, what))
		}
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			if d.Recv != nil {
				recv := receiverType(d.Recv.List[0].Type)
				if !ast.IsExported(recv) {
					continue
				}
				report(d.Pos(), "method", recv+"."+d.Name.Name, d.Doc)
				continue
			}
			report(d.Pos(), "func", d.Name.Name, d.Doc)
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						doc := s.Doc
						if doc == nil && !d.Lparen.IsValid() {
							doc = d.Doc
						}
						report(s.Pos(), "type", s.Name.Name, doc)
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if !n.IsExported() {
							continue
						}
						doc := s.Doc
						if doc == nil {
							doc = d.Doc
						}
						if d.Lparen.IsValid() && s.Doc == nil && d.Doc != nil {
							continue // a grouped constant or variable shares the group's comment
						}
						report(n.Pos(), d.Tok.String(), n.Name, doc)
					}
				}
			}
		}
	}
	return problems
}

// startsWithName: the comment's first word is the name (or its last part, for methods), perhaps
// after "A", "An" or "The".
func startsWithName(doc *ast.CommentGroup, name string) bool {
	if doc == nil {
		return false
	}
	text := doc.Text()
	for _, article := range []string{"A ", "An ", "The "} {
		text = strings.TrimPrefix(text, article)
	}
	short := name[strings.LastIndex(name, ".")+1:]
	word, _, _ := strings.Cut(strings.TrimSpace(text), " ")
	word = strings.TrimRight(word, ".,:;")
	return word == short || word == name
}

func receiverType(expr ast.Expr) string {
	switch t := expr.(type) {
	case *ast.StarExpr:
		return receiverType(t.X)
	case *ast.IndexExpr:
		return receiverType(t.X)
	case *ast.IndexListExpr:
		return receiverType(t.X)
	case *ast.Ident:
		return t.Name
	}
	return ""
}
