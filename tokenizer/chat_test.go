package tokenizer

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestChatTemplates(t *testing.T) {
	conv := []Message{
		{Role: "system", Content: "Be brief."},
		{Role: "user", Content: "Hi"},
		{Role: "assistant", Content: "Hello."},
		{Role: "user", Content: "Bye"},
	}
	for _, tc := range []struct {
		src  string // a fragment of a real tokenizer.chat_template
		tmpl Template
		want string
	}{
		{"{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}",
			TemplateChatML,
			"<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n" +
				"<|im_start|>assistant\nHello.<|im_end|>\n<|im_start|>user\nBye<|im_end|>\n<|im_start|>assistant\n"},
		{"{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'+ message['content'] | trim + '<|eot_id|>' %}",
			TemplateLlama3,
			"<|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>" +
				"<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>" +
				"<|start_header_id|>assistant<|end_header_id|>\n\nHello.<|eot_id|>" +
				"<|start_header_id|>user<|end_header_id|>\n\nBye<|eot_id|>" +
				"<|start_header_id|>assistant<|end_header_id|>\n\n"},
		{"{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}",
			TemplateLlama2,
			"[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi [/INST] Hello. </s><s>[INST] Bye [/INST]"},
	} {
		tmpl, err := DetectTemplate(tc.src)
		require.NoError(t, err)
		require.Equal(t, tc.tmpl, tmpl)
		b := spmVocab()
		b.v.ChatTemplate = tc.src
		got, err := b.build(t).ApplyChatTemplate(conv, true)
		require.NoError(t, err)
		require.Equal(t, tc.want, got, "%s", tmpl)
	}
	got, err := RenderChat(TemplateChatML, conv[1:2], false)
	require.NoError(t, err)
	require.Equal(t, "<|im_start|>user\nHi<|im_end|>\n", got)
	_, err = DetectTemplate("{{ messages }}")
	require.ErrorIs(t, err, ErrUnsupported)
	_, err = DetectTemplate("")
	require.ErrorIs(t, err, ErrUnsupported)
	_, err = RenderChat(TemplateLlama2, []Message{{Role: "assistant", Content: "x"}}, true)
	require.Error(t, err)
}

// TestChatEncode: a rendered ChatML prompt encodes its markers as control
// tokens when special tokens are parsed.
func TestChatEncode(t *testing.T) {
	b := bpeVocab("qwen2")
	start := b.add("<|im_start|>", TypeControl, 0)
	end := b.add("<|im_end|>", TypeControl, 0)
	tok := b.build(t)
	text, err := RenderChat(TemplateChatML, []Message{{Role: "user", Content: "hello"}}, false)
	require.NoError(t, err)
	got := tok.Encode(text, false, true)
	want := append([]int32{start}, ids(t, tok, "u", "s", "e", "r", "Ċ", "hello")...)
	want = append(want, end)
	want = append(want, ids(t, tok, "Ċ")...)
	require.Equal(t, want, got)
}
