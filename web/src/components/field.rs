//! A labelled text input that shows why its text is refused, right under it.

use web_sys::HtmlInputElement;
use yew::prelude::*;

/// Props of [`NumberField`].
#[derive(Properties, PartialEq)]
pub struct NumberFieldProps {
    /// Visible label.
    pub label: AttrValue,
    /// Unit shown after the box (`%`, `ms`).
    #[prop_or_default]
    pub unit: AttrValue,
    /// The `data-testid` of the input; the message gets `<testid>-error`.
    pub testid: AttrValue,
    /// What the box shows.
    pub text: AttrValue,
    /// Why the text is refused.
    #[prop_or_default]
    pub error: Option<AttrValue>,
    /// Called with the new text on every keystroke.
    pub on_edit: Callback<String>,
    /// Input mode hint for on-screen keyboards.
    #[prop_or(AttrValue::Static("decimal"))]
    pub inputmode: AttrValue,
    /// Why the field has no meaning now (real mode): then it is disabled, with this as its title.
    #[prop_or_default]
    pub off: Option<AttrValue>,
}

/// A number box. It is a text input on purpose: the browser's number input silently drops what
/// it cannot parse, and we want to show the user why their text is refused.
#[function_component]
pub fn NumberField(props: &NumberFieldProps) -> Html {
    let oninput = {
        let on_edit = props.on_edit.clone();
        Callback::from(move |e: InputEvent| {
            on_edit.emit(e.target_unchecked_into::<HtmlInputElement>().value())
        })
    };
    let id = format!("f-{}", props.testid);
    let err_id = format!("{}-error", props.testid);
    let invalid = props.error.is_some();
    html! {
        <div class={classes!("field", invalid.then_some("invalid"))}>
            <label for={id.clone()}>{ &props.label }</label>
            <div class="field-box">
                <input id={id} type="text" inputmode={&props.inputmode} autocomplete="off" spellcheck="false"
                    data-testid={&props.testid} value={&props.text} {oninput}
                    aria-invalid={invalid.to_string()} aria-describedby={err_id.clone()}
                    disabled={props.off.is_some()} title={props.off.clone()} />
                if !props.unit.is_empty() { <span class="unit">{ &props.unit }</span> }
            </div>
            if let Some(error) = &props.error {
                <p class="field-error" id={err_id} data-testid={format!("{}-error", props.testid)} role="alert">{ error }</p>
            }
        </div>
    }
}
