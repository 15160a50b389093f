package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weftrt/weft/tokenizer"
)

func newTokenizeCmd() *cobra.Command {
	var addSpecial, parseSpecial, decode bool
	cmd := &cobra.Command{
		Use:   "tokenize MODEL.gguf TEXT|-",
		Short: "print the token ids of TEXT with the tokenizer of a GGUF model",
		Long: "Encode TEXT (or standard input, byte for byte, when TEXT is -) with the\n" +
			"tokenizer in the GGUF file's metadata and print the token ids separated by\n" +
			"spaces. A vocabulary-only GGUF file (no weights) is enough. With --decode,\n" +
			"TEXT is a list of ids and the text they stand for is printed instead.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			v, err := tokenizer.LoadGGUFVocab(args[0])
			if err != nil {
				return err
			}
			tok, err := tokenizer.New(v)
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			text := args[1]
			if text == "-" {
				b, err := io.ReadAll(cmd.InOrStdin())
				if err != nil {
					return fmt.Errorf("reading standard input: %w", err)
				}
				text = string(b)
			}
			w := cmd.OutOrStdout()
			if decode {
				ids, err := parseIDs(text)
				if err != nil {
					return fmt.Errorf("--decode: %w", err)
				}
				s, err := tok.Decode(ids, parseSpecial)
				if err != nil {
					return fmt.Errorf("%s: %w", args[0], err)
				}
				_, err = fmt.Fprintln(w, s)
				return err
			}
			ids := tok.Encode(text, addSpecial, parseSpecial)
			parts := make([]string, len(ids))
			for i, id := range ids {
				parts[i] = strconv.Itoa(int(id))
			}
			_, err = fmt.Fprintln(w, strings.Join(parts, " "))
			return err
		},
	}
	cmd.Flags().BoolVar(&addSpecial, "add-special", false, "add BOS/EOS as the model's metadata says")
	cmd.Flags().BoolVar(&parseSpecial, "parse-special", false, "match control tokens like <|im_start|> in the text (with --decode: print them)")
	cmd.Flags().BoolVar(&decode, "decode", false, "TEXT is token ids (separated by spaces or commas): print their text")
	return cmd
}
