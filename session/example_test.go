package session_test

import (
	"fmt"
	"log"
	"os"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/session"
)

// A session records a conversation, branches from an earlier point and is
// resumed from its file.
func Example() {
	dir, err := os.MkdirTemp("", "sessions")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	s, err := session.Create(dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	s.Append(llm.Message{Role: llm.RoleSystem, Content: []llm.Part{llm.Text("You are terse.")}})
	question, _ := s.Append(llm.UserText("What is 2+2?", 1))
	s.Append(llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{llm.Text("5")}, StopReason: llm.StopEnd})

	// Try again from the question.
	s.SetLeaf(question.ID)
	s.Append(llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{llm.Text("4")}, StopReason: llm.StopEnd})
	if err := s.Close(); err != nil {
		log.Fatal(err)
	}

	path, err := session.Latest(dir)
	if err != nil {
		log.Fatal(err)
	}
	r, err := session.Open(path, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	fmt.Println(len(r.Entries()), "entries")
	for _, m := range r.Messages() {
		fmt.Printf("%s: %s\n", m.Role, llm.ContentText(m.Content, ""))
	}
	// Output:
	// 4 entries
	// system: You are terse.
	// user: What is 2+2?
	// assistant: 4
}
