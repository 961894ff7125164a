fn main() {
    // Templates are compiled into the binary: it runs from any directory, alone.
    minijinja_embed::embed_templates!("templates");
}
