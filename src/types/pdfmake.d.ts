// The part of pdfmake 0.3's server API this project uses (the package ships no types).
declare module 'pdfmake' {
  type Content = unknown;
  interface TDocumentDefinitions {
    content: Content[];
    info?: { title?: string; author?: string; subject?: string };
    defaultStyle?: Record<string, unknown>;
    styles?: Record<string, Record<string, unknown>>;
    pageMargins?: [number, number, number, number];
    footer?: (page: number, pages: number) => Content;
    language?: string;
  }
  interface OutputDocument {
    getBuffer(): Promise<Buffer>;
  }
  interface PdfMake {
    setFonts(fonts: Record<string, Record<'normal' | 'bold' | 'italics' | 'bolditalics', string>>): void;
    setUrlAccessPolicy(callback: (url: string) => boolean): void;
    setLocalAccessPolicy(callback: (path: string) => boolean): void;
    createPdf(doc: TDocumentDefinitions): OutputDocument;
  }
  const pdfmake: PdfMake;
  export default pdfmake;
}
