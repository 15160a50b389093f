package tokenizer

import (
	"fmt"
	"strings"
)

// Message is one turn of a chat conversation.
type Message struct {
	Role    string // "system", "user" or "assistant"
	Content string
}

// Template is a chat template family.
type Template string

// The chat template families weft renders.
const (
	TemplateChatML Template = "chatml"  // <|im_start|>role\n...<|im_end|> (Qwen, Yi, ...)
	TemplateLlama2 Template = "llama-2" // [INST] <<SYS>>...<</SYS>> ... [/INST]
	TemplateLlama3 Template = "llama-3" // <|start_header_id|>role<|end_header_id|>...<|eot_id|>
)

// DetectTemplate names the family of a tokenizer.chat_template by the
// markers it uses (the Jinja source itself is not interpreted).
func DetectTemplate(src string) (Template, error) {
	switch {
	case strings.Contains(src, "<|im_start|>"):
		return TemplateChatML, nil
	case strings.Contains(src, "<|start_header_id|>") && strings.Contains(src, "<|eot_id|>"):
		return TemplateLlama3, nil
	case strings.Contains(src, "[INST]"):
		return TemplateLlama2, nil
	case src == "":
		return "", fmt.Errorf("tokenizer: the model has no chat template: %w", ErrUnsupported)
	}
	return "", fmt.Errorf("tokenizer: chat template of an unknown family (not chatml, llama-2 or llama-3): %w", ErrUnsupported)
}

// ApplyChatTemplate renders msgs with the template family named by the
// vocabulary's tokenizer.chat_template. With addGenerationPrompt the text
// ends where the assistant's answer begins. BOS is not part of the result:
// encode it with addSpecial (and parseSpecial, so the markers become their
// control tokens).
func (t *Tokenizer) ApplyChatTemplate(msgs []Message, addGenerationPrompt bool) (string, error) {
	tmpl, err := DetectTemplate(t.v.ChatTemplate)
	if err != nil {
		return "", err
	}
	return RenderChat(tmpl, msgs, addGenerationPrompt)
}

// RenderChat renders msgs in the given template family.
func RenderChat(tmpl Template, msgs []Message, addGenerationPrompt bool) (string, error) {
	var b strings.Builder
	switch tmpl {
	case TemplateChatML:
		for _, m := range msgs {
			fmt.Fprintf(&b, "<|im_start|>%s\n%s<|im_end|>\n", m.Role, m.Content)
		}
		if addGenerationPrompt {
			b.WriteString("<|im_start|>assistant\n")
		}
	case TemplateLlama3:
		for _, m := range msgs {
			fmt.Fprintf(&b, "<|start_header_id|>%s<|end_header_id|>\n\n%s<|eot_id|>", m.Role, strings.TrimSpace(m.Content))
		}
		if addGenerationPrompt {
			b.WriteString("<|start_header_id|>assistant<|end_header_id|>\n\n")
		}
	case TemplateLlama2:
		// Meta's format: a system prompt is folded into the first user turn;
		// each exchange is "[INST] user [/INST] answer </s>", and a new turn
		// after an answer starts with "<s>". The generation prompt is implicit
		// (a user turn always ends with [/INST]).
		sys := ""
		open := false // inside an [INST] ... [/INST] turn
		first := true
		for _, m := range msgs {
			switch m.Role {
			case "system":
				sys = m.Content
			case "user":
				if !first {
					b.WriteString("<s>")
				}
				b.WriteString("[INST] ")
				if sys != "" {
					fmt.Fprintf(&b, "<<SYS>>\n%s\n<</SYS>>\n\n", sys)
					sys = ""
				}
				fmt.Fprintf(&b, "%s [/INST]", strings.TrimSpace(m.Content))
				open, first = true, false
			case "assistant":
				if !open {
					return "", fmt.Errorf("tokenizer: llama-2 chat: assistant message without a user message before it")
				}
				fmt.Fprintf(&b, " %s </s>", strings.TrimSpace(m.Content))
				open = false
			default:
				return "", fmt.Errorf("tokenizer: llama-2 chat: role %q: %w", m.Role, ErrUnsupported)
			}
		}
	default:
		return "", fmt.Errorf("tokenizer: chat template %q: %w", tmpl, ErrUnsupported)
	}
	return b.String(), nil
}
