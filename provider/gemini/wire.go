package gemini

import "encoding/json"

// The request and response bodies of streamGenerateContent, as far as the
// adapter uses them. The fields of each request struct are in the order of
// their JSON names, the order the official SDK wrote them in (it encoded
// maps), so a request renders to the bytes it rendered to before.

// request is the body of a streamGenerateContent request.
type request struct {
	Contents          []*content       `json:"contents"`
	GenerationConfig  generationConfig `json:"generationConfig"`
	SystemInstruction *content         `json:"systemInstruction,omitempty"`
	Tools             []tool           `json:"tools,omitempty"`
}

// generationConfig holds the sampling options; empty, it is sent as {}.
type generationConfig struct {
	MaxOutputTokens int32 `json:"maxOutputTokens,omitempty"`
}

// content is one turn of the conversation, or the system instruction.
type content struct {
	Parts []*part `json:"parts,omitempty"`
	Role  string  `json:"role,omitempty"`
}

// part is one piece of a content: exactly one of its payload fields is
// set, plus, on a model's part, the thought flag and signature.
type part struct {
	FunctionCall     *functionCall     `json:"functionCall,omitempty"`
	FunctionResponse *functionResponse `json:"functionResponse,omitempty"`
	InlineData       *blob             `json:"inlineData,omitempty"`
	Text             string            `json:"text,omitempty"`
	Thought          bool              `json:"thought,omitempty"`
	// ThoughtSignature travels as base64, which encoding/json writes and
	// reads for a byte slice.
	ThoughtSignature []byte `json:"thoughtSignature,omitempty"`
}

// functionCall is a call the model made. Args is a map, so that keys
// are sent sorted and a call the API sent reads back the same.
type functionCall struct {
	Args map[string]any `json:"args,omitempty"`
	ID   string         `json:"id,omitempty"`
	Name string         `json:"name,omitempty"`
}

// functionResponse is a tool's result: {"output": text} or
// {"error": text}.
type functionResponse struct {
	ID       string            `json:"id,omitempty"`
	Name     string            `json:"name,omitempty"`
	Response map[string]string `json:"response,omitempty"`
}

// blob is inline data, such as an image; Data travels as base64.
type blob struct {
	Data     []byte `json:"data,omitempty"`
	MIMEType string `json:"mimeType,omitempty"`
}

// tool is a group of function declarations.
type tool struct {
	FunctionDeclarations []functionDeclaration `json:"functionDeclarations,omitempty"`
}

// functionDeclaration declares a function, its parameters as a JSON
// Schema sent as it is written (parametersJsonSchema).
type functionDeclaration struct {
	Description          string          `json:"description,omitempty"`
	Name                 string          `json:"name"`
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema,omitempty"`
}

// response is one chunk of the stream: a GenerateContentResponse, or an
// error object.
type response struct {
	Candidates     []*candidate    `json:"candidates"`
	PromptFeedback *promptFeedback `json:"promptFeedback"`
	UsageMetadata  *usageMetadata  `json:"usageMetadata"`
	Error          *errorObject    `json:"error"`
}

// candidate is one answer of a chunk.
type candidate struct {
	Content       *content `json:"content"`
	FinishReason  string   `json:"finishReason"`
	FinishMessage string   `json:"finishMessage"`
	Index         int      `json:"index"`
}

// promptFeedback says why a prompt was blocked.
type promptFeedback struct {
	BlockReason        string `json:"blockReason"`
	BlockReasonMessage string `json:"blockReasonMessage"`
}

// usageMetadata counts the tokens of a request.
type usageMetadata struct {
	PromptTokenCount        int `json:"promptTokenCount"`
	CachedContentTokenCount int `json:"cachedContentTokenCount"`
	CandidatesTokenCount    int `json:"candidatesTokenCount"`
	ThoughtsTokenCount      int `json:"thoughtsTokenCount"`
	ToolUsePromptTokenCount int `json:"toolUsePromptTokenCount"`
}

// errorObject is the API's error: {"error": {"code", "message", "status"}}.
type errorObject struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Status  string `json:"status"`
}

// Finish reasons the decoder tells apart.
const (
	finishStop      = "STOP"
	finishMaxTokens = "MAX_TOKENS"
	finishUnset     = "FINISH_REASON_UNSPECIFIED"
)
