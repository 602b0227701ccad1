package tool

import "fmt"

// Exposure says how a registered tool reaches the model.
type Exposure string

// The exposures, from most to least visible.
const (
	// Direct tools are declared while active and active from registration
	// (unless StartInactive); other tools and scripts may call them while
	// they are active.
	Direct Exposure = "direct"
	// ModelOnly tools behave like Direct ones for the model but are never
	// callable from scripts (tool_search, codemode).
	ModelOnly Exposure = "model-only"
	// Codemode tools are callable from codemode scripts, which list them,
	// and are declared only once something loads them.
	Codemode Exposure = "codemode"
	// Deferred tools sit on the shelf until tool_search (or an explicit
	// activation) loads them.
	Deferred Exposure = "deferred"
	// Hidden tools are registered but unreachable: activating one has no
	// effect. Re-registering a tool as Hidden is how it is withdrawn.
	Hidden Exposure = "hidden"
)

// ParseExposure returns the exposure named s.
func ParseExposure(s string) (Exposure, error) {
	switch e := Exposure(s); e {
	case Direct, ModelOnly, Codemode, Deferred, Hidden:
		return e, nil
	}
	return "", fmt.Errorf("unknown exposure %q: use direct, model-only, codemode, deferred or hidden", s)
}

// ActiveOnRegister reports whether tools of this exposure become active
// when they are registered.
func (e Exposure) ActiveOnRegister() bool { return e == Direct || e == ModelOnly || e == "" }

// Activatable reports whether a tool of this exposure can be active
// (declared to the model).
func (e Exposure) Activatable() bool { return e != Hidden }

// Loadable reports whether tool_search may load a tool of this exposure:
// only tools that wait on the shelf.
func (e Exposure) Loadable() bool { return e == Deferred || e == Codemode }
